"""The candidate pool: ``.agents/pool/{pending,staged,validated,rejected}/<id>.json`` plus the
append-only ``chain.jsonl`` of every operation, in AgentOps' formats.

Entries are kept as the JSON objects they are on disk, so fields swarmq does not know (and
fields written by newer AgentOps versions) survive every rewrite. A file that does not parse is
reported in :attr:`Pool.problems` and left where it is, never deleted. Writers hold the pool's
store lock (``AgentsLayout.pool_lock``) and pass its lease.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError
from swarmq.flywheel.model import (
    CANDIDATE_ID,
    MAX_REASON_LENGTH,
    POOL_DIRS,
    STATUS_PRECEDENCE,
    PoolStatus,
    QualityTier,
    parse_time,
    rfc3339,
    tier_rank,
)
from swarmq.flywheel.store import AgentsLayout, DirSync, move_file, remove_file, write_file
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.locking import Lease

CHAIN_FILE = "chain.jsonl"
PROMOTED_INDEX_FILE = "promoted-index.jsonl"


class PoolError(SwarmqError, ValueError):
    """A pool operation that is not allowed: the root of the three below."""


class InvalidCandidate(PoolError, InvalidInput):
    """A candidate id, reason or note that breaks its rules (400)."""


class CandidateNotFound(PoolError, NotFound):
    """No candidate with that id in the pool (404)."""


class CandidateConflict(PoolError, Conflict):
    """The candidate's status forbids the step (already reviewed, rejected, held by the gate,
    tier too low) (409)."""


def check_candidate_id(candidate_id: str) -> str:
    if not isinstance(candidate_id, str) or CANDIDATE_ID.fullmatch(candidate_id) is None:
        raise InvalidCandidate(
            f"candidate id {candidate_id!r} is not allowed: use 1-128 ASCII letters, digits, '_' or '-'"
        )
    return candidate_id


@dataclass
class PoolEntry:
    """One pool file: its JSON object as read (unknown keys kept), where it is, its status."""

    data: dict[str, Any]
    status: PoolStatus
    path: Path

    @property
    def candidate(self) -> dict[str, Any]:
        value = self.data.get("candidate")
        return value if isinstance(value, dict) else {}

    @property
    def id(self) -> str:
        return str(self.candidate.get("id") or self.path.stem)

    @property
    def type(self) -> str:
        return str(self.candidate.get("type") or "")

    @property
    def tier(self) -> str:
        scoring = self.data.get("scoring_result")
        tier = self.candidate.get("tier") or (
            scoring.get("tier_assignment") if isinstance(scoring, dict) else None
        )
        return str(tier or QualityTier.DISCARD)

    @property
    def raw_score(self) -> float:
        value = self.candidate.get("raw_score")
        return float(value) if isinstance(value, int | float) else 0.0

    @property
    def content(self) -> str:
        return str(self.candidate.get("content") or "")

    @property
    def added_at(self) -> datetime | None:
        return parse_time(self.data.get("added_at"))

    @property
    def human_review(self) -> dict[str, Any] | None:
        review = self.data.get("human_review")
        return review if isinstance(review, dict) else None

    def age_hours(self, now: datetime) -> float:
        added = self.added_at
        return 0.0 if added is None else (now - added).total_seconds() / 3600.0

    def dumps(self) -> str:
        """``json.MarshalIndent`` form (two spaces), as AgentOps writes pool files."""
        return json.dumps(self.data, indent=2, ensure_ascii=False)

    def summary(self, now: datetime | None = None) -> dict[str, Any]:
        now = now or datetime.now(UTC)
        return {
            "id": self.id,
            "status": self.status.value,
            "type": self.type,
            "tier": self.tier,
            "raw_score": round(self.raw_score, 4),
            "age_hours": round(self.age_hours(now), 2),
            "added_at": self.data.get("added_at"),
            "path": str(self.path),
            "title": first_line(self.content),
        }


def first_line(content: str, limit: int = 80) -> str:
    for line in content.split("\n"):
        text = line.strip().lstrip("#").strip()
        if text.lower().startswith("learning:"):
            text = text[len("learning:") :].strip()
        if text:
            return text if len(text) <= limit else text[: limit - 3] + "..."
    return ""


@dataclass
class Pool:
    layout: AgentsLayout
    problems: list[str] = field(default_factory=list)
    """Pool files that could not be read on the last scan (left in place)."""
    sync: DirSync | None = None
    """While batching: directories whose fsync is deferred to :meth:`flush`."""
    events: list[dict[str, Any]] | None = None
    """While batching: chain events not yet appended."""

    def start_batch(self) -> None:
        """Defer directory fsyncs and chain appends to :meth:`flush` (many moves, few syncs)."""
        self.sync = DirSync()
        self.events = []

    def flush(self, lease: Lease | None) -> None:
        """Make the batch's files durable, then log them; the batch stays open."""
        if self.sync is not None:
            self.sync.flush()
        if self.events:
            append_jsonl(self.root / CHAIN_FILE, self.events, lease=lease)
            self.events = []

    @property
    def root(self) -> Path:
        return self.layout.pool

    def dir(self, status: PoolStatus) -> Path:
        return self.root / POOL_DIRS[status]

    # -- reading -------------------------------------------------------------------------------

    def read(self, path: Path, status: PoolStatus) -> PoolEntry | None:
        """One pool file (from :meth:`files`); ``None`` when it is gone or unreadable."""
        return self._read(path, status)

    def _read(self, path: Path, status: PoolStatus) -> PoolEntry | None:
        try:
            data = loads_bounded(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.problems.append(f"{path}: unreadable pool entry ({exc}); left in place")
            return None
        if not isinstance(data, dict):
            self.problems.append(f"{path}: pool entry is not a JSON object; left in place")
            return None
        return PoolEntry(data, status, path)

    def get(self, candidate_id: str) -> PoolEntry | None:
        """The entry with this id, from the most advanced directory holding it."""
        check_candidate_id(candidate_id)
        for status in STATUS_PRECEDENCE:
            entry = self._read(self.dir(status) / f"{candidate_id}.json", status)
            if entry is not None:
                return entry
        return None

    def require(self, candidate_id: str) -> PoolEntry:
        entry = self.get(candidate_id)
        if entry is None:
            raise CandidateNotFound(f"no candidate {candidate_id!r} in {self.root}")
        return entry

    def exists(self, candidate_id: str) -> bool:
        return any((self.dir(s) / f"{candidate_id}.json").exists() for s in STATUS_PRECEDENCE)

    def entries(self, status: PoolStatus | None = None) -> Iterator[PoolEntry]:
        """Scan the pool (one directory listing per status); each id once, most advanced wins."""
        self.problems = []
        for path, current in self.files(status):
            entry = self._read(path, current)
            if entry is not None:
                yield entry

    def files(self, status: PoolStatus | None = None) -> Iterator[tuple[Path, PoolStatus]]:
        """The pool's files and their status, as :meth:`entries` reads them (each id once, the
        most advanced wins), unread: for a reader that keeps its own parse of each file."""
        seen: set[str] = set()
        for current in STATUS_PRECEDENCE:
            directory = self.dir(current)
            try:
                names = sorted(
                    n
                    for n in os.listdir(directory)
                    if n.endswith(".json") and not n.startswith(".")
                )
            except FileNotFoundError:
                continue
            for name in names:
                ident = name[:-5]
                if ident in seen:
                    continue
                seen.add(ident)
                if status is None or current is status:
                    yield directory / name, current

    # -- writing -------------------------------------------------------------------------------

    def chain(self, lease: Lease | None, operation: str, candidate_id: str, **fields: Any) -> None:
        event: dict[str, Any] = {
            "timestamp": rfc3339(),
            "operation": operation,
            "candidate_id": candidate_id,
        }
        event.update({k: v for k, v in fields.items() if v not in (None, "")})
        if self.events is not None:
            self.events.append(event)
        else:
            append_jsonl(self.root / CHAIN_FILE, [event], lease=lease)

    def write(self, entry: PoolEntry, *, lease: Lease | None) -> None:
        write_file(entry.path, entry.dumps(), lease=lease, store=self.root, sync=self.sync)

    def add(
        self,
        candidate: dict[str, Any],
        scoring: dict[str, Any],
        *,
        added_at: datetime,
        lease: Lease | None,
    ) -> PoolEntry:
        """A new pending entry (with an open human review when its tier needs one)."""
        ident = check_candidate_id(str(candidate.get("id", "")))
        now = rfc3339()
        data: dict[str, Any] = {"candidate": candidate, "scoring_result": scoring}
        if scoring.get("gate_required"):
            data["human_review"] = {"reviewed": False, "approved": False}
        data.update(
            {"status": PoolStatus.PENDING.value, "added_at": rfc3339(added_at), "updated_at": now}
        )
        entry = PoolEntry(data, PoolStatus.PENDING, self.dir(PoolStatus.PENDING) / f"{ident}.json")
        self.write(entry, lease=lease)
        self.chain(lease, "add", ident, to_status=PoolStatus.PENDING.value)
        return entry

    def _move(self, entry: PoolEntry, status: PoolStatus, *, lease: Lease | None) -> PoolEntry:
        entry.data["status"] = status.value
        entry.data["updated_at"] = rfc3339()
        target = self.dir(status) / entry.path.name
        move_file(entry.path, target, entry.dumps(), lease=lease, store=self.root, sync=self.sync)
        return PoolEntry(entry.data, status, target)

    def stage(
        self, entry: PoolEntry, *, min_tier: QualityTier = QualityTier.BRONZE, lease: Lease | None
    ) -> PoolEntry:
        if entry.status is PoolStatus.REJECTED:
            raise CandidateConflict(f"{entry.id}: a rejected candidate cannot be staged")
        if tier_rank(entry.tier) < tier_rank(min_tier):
            raise CandidateConflict(
                f"{entry.id}: tier {entry.tier} is below the minimum {min_tier.value}"
            )
        if entry.status is PoolStatus.STAGED:
            return entry
        previous = entry.status
        staged = self._move(entry, PoolStatus.STAGED, lease=lease)
        self.chain(
            lease, "stage", entry.id, from_status=previous.value, to_status=PoolStatus.STAGED.value
        )
        return staged

    def reject(
        self, entry: PoolEntry, reason: str, *, reviewer: str = "", lease: Lease | None
    ) -> PoolEntry:
        if len(reason) > MAX_REASON_LENGTH:
            raise InvalidCandidate(
                f"rejection reason is {len(reason)} characters; at most {MAX_REASON_LENGTH}"
            )
        previous = entry.status
        entry.data["human_review"] = {
            "reviewed": True,
            "approved": False,
            "reviewer": reviewer or None,
            "notes": reason,
            "reviewed_at": rfc3339(),
        }
        entry.data["human_review"] = {
            k: v for k, v in entry.data["human_review"].items() if v is not None
        }
        rejected = self._move(entry, PoolStatus.REJECTED, lease=lease)
        self.chain(
            lease,
            "reject",
            entry.id,
            from_status=previous.value,
            to_status=PoolStatus.REJECTED.value,
            reason=reason,
            reviewer=reviewer,
        )
        return rejected

    def approve(
        self, entry: PoolEntry, note: str = "", *, reviewer: str = "", lease: Lease | None
    ) -> PoolEntry:
        review = entry.human_review
        if review and review.get("reviewed"):
            raise CandidateConflict(
                f"{entry.id}: already reviewed by {review.get('reviewer') or 'someone'}"
            )
        if len(note) > MAX_REASON_LENGTH:
            raise InvalidCandidate(
                f"approval note is {len(note)} characters; at most {MAX_REASON_LENGTH}"
            )
        entry.data["human_review"] = {
            k: v
            for k, v in {
                "reviewed": True,
                "approved": True,
                "reviewer": reviewer or None,
                "notes": note or None,
                "reviewed_at": rfc3339(),
            }.items()
            if v is not None
        }
        entry.data["updated_at"] = rfc3339()
        self.write(entry, lease=lease)
        self.chain(lease, "approve", entry.id, reason=note, reviewer=reviewer)
        return entry

    def discard_file(self, entry: PoolEntry, *, lease: Lease | None) -> None:
        remove_file(entry.path, lease=lease, store=self.root, sync=self.sync)
