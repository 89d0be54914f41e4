"""Where forge records what it did: the result of one run, the ledger of forged transcripts, the
index of every content hash ever forged, and the write of a run's new candidates (one pending
file, under the knowledge lock). Split from :mod:`extract` so that module stays about mining."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel.model import rfc3339
from swarmq.flywheel.probes import ProbeObservation
from swarmq.flywheel.promoted import PromotedIndex
from swarmq.flywheel.store import AgentsLayout, write_file
from swarmq.forge._pending_file import ForgedCandidate, pending_name, render_pending
from swarmq.forge.follow import FollowedJsonl, followed
from swarmq.forge.templates import SeenPassages
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.locking import StoreLocks


@dataclass
class ForgeResult:
    transcript: str
    key: str
    status: str = "forged"
    """``forged`` (new candidates written), ``unchanged`` (ledger hit: not read again),
    ``no-lessons`` (read, and nothing in it reads as a lesson) or ``nothing-new`` (read, and
    every lesson in it was forged before): the last two say different things to a user."""
    format: str | None = None
    messages: int = 0
    passages: int = 0
    candidates: int = 0
    new: int = 0
    duplicates: int = 0
    pending_file: str | None = None
    rejected: Counter[str] = field(default_factory=Counter)
    report: dict[str, Any] = field(default_factory=dict)
    llm: dict[str, Any] = field(default_factory=dict)
    new_candidates: list[dict[str, Any]] = field(default_factory=list)
    found: list[ForgedCandidate] = field(default_factory=list)
    """Every distinct candidate of this transcript, new or already known (for evaluation)."""
    observations: list[ProbeObservation] = field(default_factory=list)
    """Failed probes of missing paths the session resolved: kept apart, never candidates
    (:mod:`swarmq.flywheel.probes`)."""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "transcript": self.transcript,
            "key": self.key,
            "status": self.status,
            "format": self.format,
            "messages": self.messages,
            "passages": self.passages,
            "candidates": self.candidates,
            "new": self.new,
            "duplicates": self.duplicates,
            "pending_file": self.pending_file,
            "rejected": dict(self.rejected),
            "report": self.report,
            "llm": self.llm,
            "new_candidates": self.new_candidates,
            "seconds": round(self.seconds, 3),
        }


def ledger_path(layout: AgentsLayout) -> Path:
    return layout.forge / "ledger.jsonl"


def index_path(layout: AgentsLayout) -> Path:
    return layout.forge / "index.jsonl"


def passages_path(layout: AgentsLayout) -> Path:
    return layout.forge / "passages.jsonl"


def file_fingerprint(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


FINGERPRINT = ("size", "mtime_ns")


class Ledger(FollowedJsonl):
    """The ledger's latest fingerprint per key, followed (see :mod:`swarmq.forge.follow`):
    a run over n transcripts reads it once, not n times."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.latest: dict[str, tuple[Any, ...]] = {}

    def clear(self) -> None:
        self.latest.clear()

    def fold(self, value: Any) -> None:
        if isinstance(value, dict) and isinstance(value.get("key"), str):
            self.latest[value["key"]] = tuple(value.get(k) for k in FINGERPRINT)


class ForgeIndex(FollowedJsonl):
    """Every content hash the forge index holds, followed like the ledger."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.hashes: set[str] = set()

    def clear(self) -> None:
        self.hashes.clear()

    def fold(self, value: Any) -> None:
        if isinstance(value, dict) and isinstance(value.get("content_hash"), str):
            self.hashes.add(value["content_hash"])


def already_forged(layout: AgentsLayout, key: str, fingerprint: dict[str, int]) -> bool:
    """Whether the ledger's latest record for ``key`` saw this very file."""
    ledger = followed(Ledger, ledger_path(layout))
    with ledger.lock:
        ledger.refresh()
        latest = ledger.latest.get(key)
    return latest is not None and latest == tuple(fingerprint.get(k) for k in FINGERPRINT)


def forged_hashes(layout: AgentsLayout) -> set[str]:
    index = followed(ForgeIndex, index_path(layout))
    with index.lock:
        index.refresh()
        return set(index.hashes)


def write_candidates(
    layout: AgentsLayout,
    locks: StoreLocks,
    found: list[ForgedCandidate],
    result: ForgeResult,
    *,
    source: Path,
    fmt: str,
    session: str | None,
    now: datetime,
    ledger: dict[str, Any],
    seen_passages: SeenPassages | None = None,
) -> None:
    """Write the candidates never forged nor promoted before as one pending file, index them and
    record the run in the ledger, under the knowledge lock; fills ``result``'s counts."""
    with locks.hold(layout.knowledge_lock) as lease:
        index = followed(ForgeIndex, index_path(layout))
        with index.lock:
            index.refresh()
            unknown = [c for c in found if c.content_hash not in index.hashes]
        promoted = PromotedIndex(layout)
        new = [c for c in unknown if promoted.lookup(c.content_hash) is None]
        result.duplicates += len(found) - len(new)
        if new:
            target = layout.pending / pending_name(new, now)
            write_file(
                target,
                render_pending(source, fmt, session, new, now),
                lease=lease,
                store=layout.knowledge,
                mode=0o644,
            )
            append_jsonl(
                index_path(layout),
                [
                    {
                        "content_hash": c.content_hash,
                        "learning_id": c.learning_id,
                        "pending_file": str(target),
                        "transcript": c.transcript,
                        "message_index": c.message_index,
                        "forged_at": rfc3339(now),
                    }
                    for c in new
                ],
                lease=lease,
            )
            result.pending_file = str(target)
        if seen_passages is not None:
            seen_passages.flush(lease)
        append_jsonl(
            ledger_path(layout),
            [{**ledger, "candidates": len(found), "new": len(new), "forged_at": rfc3339(now)}],
            lease=lease,
        )
    result.new = len(new)
    result.new_candidates = [c.as_dict() for c in new]
    result.status = "forged" if new else ("nothing-new" if found else "no-lessons")
