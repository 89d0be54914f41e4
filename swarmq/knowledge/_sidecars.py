"""The small JSONL files around a store: rejected, quarantined, unactionable, retractions,
evicted, application and events. Formats are opencode-swarm's; FIFO caps keep the newest lines,
and every line a cap pushes out is recorded in the store's evicted file (never just dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from swarmq.knowledge.serialize import dumps_js
from swarmq.storage.atomic import append_lines
from swarmq.storage.jsonl import JsonlLine, read_jsonl, rewrite_jsonl
from swarmq.storage.locking import Lease


def rejected_record(entry_id: str, lesson: str, reason: str, layer: int, at: str) -> dict[str, Any]:
    """``knowledge-rejected.jsonl`` line, key order exactly opencode-swarm's."""
    return {
        "id": entry_id,
        "lesson": lesson,
        "rejection_reason": reason,
        "rejected_at": at,
        "rejection_layer": layer,
    }


def evicted_record(source: Path, line: JsonlLine, reason: str, at: str) -> dict[str, Any]:
    """A line pushed out of ``source``; ``line`` keeps its exact bytes as a JSON string."""
    value = line.value
    entry_id = value.get("id") if isinstance(value, Mapping) else None
    return {
        "source": source.name,
        "reason": reason,
        "evicted_at": at,
        "id": entry_id,
        "line": line.raw,
    }


def append_capped(
    path: Path,
    records: Iterable[Mapping[str, Any] | str],
    *,
    cap: int | None,
    at: str,
    evicted_to: Path,
    corrupt_to: Path,
    lease: Lease | None = None,
) -> int:
    """Append records (dicts or ready lines); beyond ``cap`` keep the newest, recording the
    evicted ones. Returns how many old lines were evicted."""
    lines = [r if isinstance(r, str) else dumps_js(r) for r in records]
    if not lines:
        return 0
    if cap is None or _count_lines(path) + len(lines) <= cap:
        append_lines(path, lines, lease=lease)
        return 0
    current = read_jsonl(path)
    total = len(current.lines) + len(lines)
    if total <= cap and not current.corrupt:
        append_lines(path, lines, lease=lease)
        return 0
    keep_old = max(0, cap - len(lines))
    drop = current.lines[: len(current.lines) - keep_old] if keep_old < len(current.lines) else []
    kept = current.lines[len(drop) :]
    if drop:
        append_lines(
            evicted_to,
            [dumps_js(evicted_record(path, line, "fifo_cap", at)) for line in drop],
            lease=lease,
        )
    new_lines = lines[-cap:] if len(lines) > cap else lines
    if len(lines) > cap:  # more new records than the cap: the overflow is evicted too
        overflow = lines[: len(lines) - cap]
        append_lines(
            evicted_to,
            [
                dumps_js(
                    {
                        "source": path.name,
                        "reason": "fifo_cap",
                        "evicted_at": at,
                        "id": None,
                        "line": raw,
                    }
                )
                for raw in overflow
            ],
            lease=lease,
        )
    rewrite_jsonl(
        path,
        [*(line.raw for line in kept), *new_lines],
        lease=lease,
        corrupt=current.corrupt,
        corrupt_to=corrupt_to,
    )
    return len(drop)


def _count_lines(path: Path) -> int:
    """Non-blank lines, without parsing (the common case of a cap not yet reached)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return sum(1 for line in data.split(b"\n") if line.strip())


def remove_lines(
    path: Path,
    match: Callable[[Any], bool],
    *,
    corrupt_to: Path,
    lease: Lease | None = None,
) -> list[Any]:
    """Rewrite ``path`` without the lines whose value matches; returns the removed values."""
    current = read_jsonl(path)
    removed = [line.value for line in current.lines if match(line.value)]
    if removed or current.corrupt:
        rewrite_jsonl(
            path,
            [line.raw for line in current.lines if not match(line.value)],
            lease=lease,
            corrupt=current.corrupt,
            corrupt_to=corrupt_to,
        )
    return removed


def values(path: Path) -> list[Any]:
    """Every parsed value of a sidecar in file order (corrupt lines are reported elsewhere)."""
    return [line.value for line in read_jsonl(path).lines]
