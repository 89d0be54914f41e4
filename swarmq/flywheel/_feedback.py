"""Feedback: citations that judge an artifact move its utility, u' = (1 − α)·u + α·r.

``helpful``, ``used-in-final-artifact`` and ``applied`` citations carry reward 1, ``harmful`` and
``refuted`` reward 0 (an explicit ``feedback_reward`` wins); ``retrieved`` is exposure only. Each
reward also counts toward ``reward_count`` and ``helpful_count`` (r > 0.5) or ``harmful_count``
(r < 0.5), which drive maturity. Feedback applies to promoted learnings and to pool candidates
alike, and is logged to ``.agents/ao/feedback.jsonl``.

Citations are read from a byte-offset cursor (``ao/feedback-cursor.json``), so each is applied
exactly once however often the close loop runs; an unterminated last line waits for next time.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel.artifacts import read_learning, updated_text
from swarmq.flywheel.citations import CitationType, artifact_key
from swarmq.flywheel.model import ALPHA, INITIAL_UTILITY, parse_time, rfc3339, update_utility
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.store import AgentsLayout, DirSync, write_file
from swarmq.storage.atomic import append_jsonl, write_json_atomic
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.locking import StoreLocks

HEAD_BYTES = 256


@dataclass
class FeedbackResult:
    citations_read: int = 0
    rewards: int = 0
    artifacts_updated: int = 0
    unknown_artifacts: list[str] = field(default_factory=list)
    corrupt_lines: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "citations_read": self.citations_read,
            "rewards": self.rewards,
            "artifacts_updated": self.artifacts_updated,
            "unknown_artifacts": self.unknown_artifacts[:20],
            "corrupt_lines": self.corrupt_lines,
        }


def reward_of(citation: dict[str, Any]) -> float | None:
    explicit = citation.get("feedback_reward")
    if (
        isinstance(explicit, int | float)
        and not isinstance(explicit, bool)
        and citation.get("feedback_given")
    ):
        return max(0.0, min(1.0, float(explicit)))
    kind = str(citation.get("citation_type") or "").strip().lower()
    if kind in CitationType.REWARD:
        if isinstance(explicit, int | float) and not isinstance(explicit, bool):
            return max(0.0, min(1.0, float(explicit)))
        return CitationType.REWARD[kind]
    return None


def apply_rewards(
    fields: dict[str, Any], rewards: list[float], now: datetime
) -> tuple[dict[str, Any], float, float]:
    """Updated fields after ``rewards`` in order; also the utility before and after."""
    utility = fields.get("utility")
    before = (
        float(utility)
        if isinstance(utility, int | float) and not isinstance(utility, bool)
        else INITIAL_UTILITY
    )
    after = before
    counts = {
        k: int(fields.get(k) or 0) if isinstance(fields.get(k), int | float) else 0
        for k in ("reward_count", "helpful_count", "harmful_count")
    }
    for reward in rewards:
        after = update_utility(after, reward)
        counts["reward_count"] += 1
        if reward > 0.5:
            counts["helpful_count"] += 1
        elif reward < 0.5:
            counts["harmful_count"] += 1
    updates: dict[str, Any] = {
        "utility": round(after, 6),
        **counts,
        "last_reward": rewards[-1],
        "last_reward_at": rfc3339(now),
    }
    return updates, before, after


def _read_new_lines(path: Path, cursor: dict[str, Any]) -> tuple[list[bytes], int, str]:
    """Complete lines after the cursor, the new offset and the file's head digest."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return [], 0, ""
    with handle:
        head = hashlib.sha256(handle.read(HEAD_BYTES)).hexdigest()
        size = handle.seek(0, 2)
        offset = int(cursor.get("offset") or 0)
        if cursor.get("head") != head or offset > size:
            offset = 0  # rewritten or replaced: re-read, guarded by last_cited_at below
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    return data[:end].split(b"\n")[:-1] if end else [], offset + end, head


def apply_feedback(
    layout: AgentsLayout, locks: StoreLocks, *, now: datetime | None = None
) -> FeedbackResult:
    """Apply every not-yet-applied feedback citation (pool → learnings → feedback locks)."""
    now = now or datetime.now(UTC)
    result = FeedbackResult()
    root = layout.root.parent
    pool = Pool(layout)
    with (
        locks.hold(layout.pool_lock) as pool_lease,
        locks.hold(layout.learnings_lock) as learnings_lease,
        locks.hold(layout.feedback_lock) as feedback_lease,
    ):
        try:
            cursor = loads_bounded(layout.feedback_cursor.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            cursor = {}
        cursor = cursor if isinstance(cursor, dict) else {}
        guard = parse_time(cursor.get("last_cited_at")) if cursor.get("offset") else None
        lines, offset, head = _read_new_lines(layout.citations, cursor)
        grouped: dict[str, list[tuple[float, dict[str, Any]]]] = defaultdict(list)
        latest = guard
        for raw in lines:
            if not raw.strip():
                continue
            try:
                citation = loads_bounded(raw)
            except ValueError:
                result.corrupt_lines += 1
                continue
            if not isinstance(citation, dict) or not isinstance(citation.get("artifact_path"), str):
                continue
            result.citations_read += 1
            cited = parse_time(citation.get("cited_at"))
            if (
                guard is not None
                and cursor.get("head") != head
                and cited is not None
                and cited <= guard
            ):
                continue
            if cited is not None and (latest is None or cited > latest):
                latest = cited
            reward = reward_of(citation)
            if reward is not None:
                grouped[artifact_key(root, citation["artifact_path"])].append((reward, citation))
        records: list[dict[str, Any]] = []
        pool.start_batch()
        for key, items in grouped.items():
            rewards = [r for r, _ in items]
            before_after = (
                _apply_to_pool(pool, key, rewards, now, pool_lease)
                if key.startswith("pool:")
                else _apply_to_learning(layout, Path(key), rewards, now, learnings_lease, pool.sync)
            )
            if before_after is None:
                result.unknown_artifacts.append(items[0][1]["artifact_path"])
                continue
            result.artifacts_updated += 1
            utility = before_after[0]
            for reward, citation in items:
                after = update_utility(utility, reward)
                records.append(
                    {
                        "recorded_at": rfc3339(now),
                        "session_id": citation.get("session_id", ""),
                        "artifact_path": citation["artifact_path"],
                        "citation_type": citation.get("citation_type", ""),
                        "reward": reward,
                        "utility_before": round(utility, 6),
                        "utility_after": round(after, 6),
                        "alpha": ALPHA,
                    }
                )
                utility = after
                result.rewards += 1
        pool.flush(pool_lease)  # the updated files are durable before the log says so
        if records:
            append_jsonl(layout.feedback, records, lease=feedback_lease)
        write_json_atomic(
            layout.feedback_cursor,
            {
                "offset": offset,
                "head": head,
                "last_cited_at": rfc3339(latest) if latest else None,
                "updated_at": rfc3339(now),
            },
            lease=feedback_lease,
        )
    return result


def _apply_to_learning(
    layout: AgentsLayout,
    path: Path,
    rewards: list[float],
    now: datetime,
    lease: Any,
    sync: DirSync | None,
) -> tuple[float, float] | None:
    if path.parent not in (layout.learnings, layout.patterns) or not path.is_file():
        return None
    learning = read_learning(path)
    if learning is None:
        return None
    updates, before, after = apply_rewards(learning.fields, rewards, now)
    write_file(
        path, updated_text(learning, updates), lease=lease, store=path.parent, mode=0o644, sync=sync
    )
    return before, after


def _apply_to_pool(
    pool: Pool, key: str, rewards: list[float], now: datetime, lease: Any
) -> tuple[float, float] | None:
    entry = pool.get(key.removeprefix("pool:"))
    if entry is None:
        return None
    updates, before, after = apply_rewards(entry.candidate, rewards, now)
    entry.candidate.update(updates)
    entry.data["updated_at"] = rfc3339(now)
    pool.write(entry, lease=lease)
    return before, after
