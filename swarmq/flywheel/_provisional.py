"""The close loop's provisional step: show high-confidence candidates before they graduate,
and retire the ones nothing confirmed.

Eligible: a live, never refuted candidate of tier ``provisional_min_tier`` (silver) or better
that is high-confidence: gold, or extracted with high confidence, or carrying a failure
signature. It is published once (the outcome is kept in the candidate's
``metadata``: ``provisional_outcome``, and ``provisional_entry_id`` / ``provisional_at`` when an
entry was added). A provisional entry is retired when its candidate was refuted and never
confirmed, or when no confirmation came within ``provisional_days`` of the sessions' clock.
The knowledge store is written outside the pool lock; the pool files are then updated under it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from swarmq.flywheel.bridge import (
    PROVISIONAL_ENTRY,
    LessonSink,
    publish_provisional,
    retire_provisional,
)
from swarmq.flywheel.citations import CitationStats, display_path, pool_key
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.confirm import Signer, candidate_signature, is_specific
from swarmq.flywheel.model import PoolStatus, QualityTier, parse_time, rfc3339, tier_rank
from swarmq.flywheel.pool import Pool, PoolEntry
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import StoreLocks

OUTCOME = "provisional_outcome"
AT = "provisional_at"
RETIRED = "provisional_retired_at"
_KEPT = (PoolStatus.PENDING, PoolStatus.STAGED, PoolStatus.REJECTED)


@dataclass(frozen=True, slots=True)
class _Change:
    candidate_id: str
    fields: dict[str, Any]


def eligible(entry: PoolEntry, config: FlywheelConfig, signer: Signer) -> bool:
    rank = tier_rank(entry.tier)
    if rank == 0 or rank < tier_rank(config.provisional_min_tier):
        return False
    if rank >= tier_rank(QualityTier.GOLD):
        return True
    declared = str(_metadata(entry).get("pending_confidence") or "").strip().lower()
    return declared == "high" or is_specific(candidate_signature(entry, signer))


def _metadata(entry: PoolEntry) -> dict[str, Any]:
    metadata = entry.candidate.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def provisional_pass(
    layout: AgentsLayout,
    locks: StoreLocks,
    config: FlywheelConfig,
    sink: LessonSink,
    stats: CitationStats,
    *,
    now: datetime,
    signer: Signer,
) -> list[dict[str, Any]]:
    """Publish what is newly eligible and retire what expired or was refuted; returns one
    outcome per entry touched."""
    root = layout.root.parent
    mode = config.knowledge_bridge_validation.value
    outcomes: list[dict[str, Any]] = []
    changes: list[_Change] = []
    for entry in list(Pool(layout).entries()):
        if entry.status not in _KEPT:
            continue
        metadata = _metadata(entry)
        key = pool_key(entry.id)
        confirmed, refuted = stats.useful(key), stats.negative[key]
        entry_id = metadata.get(PROVISIONAL_ENTRY)
        if entry_id:
            rejected = entry.status is PoolStatus.REJECTED
            if metadata.get(RETIRED) or (confirmed and not rejected):
                continue
            since = parse_time(metadata.get(AT))
            expired = since is not None and now - since > timedelta(days=config.provisional_days)
            if not (refuted or expired or rejected):
                continue
            why = (
                "its candidate was rejected"
                if rejected
                else "refuted by an acknowledgement"
                if refuted
                else f"not confirmed within {config.provisional_days:g} days"
            )
            done = retire_provisional(sink, str(entry_id), why)
            outcomes.append(done.as_dict())
            changes.append(_Change(entry.id, {RETIRED: rfc3339(now), "provisional_retired": why}))
            continue
        if (
            entry.status is PoolStatus.REJECTED
            or metadata.get(OUTCOME)
            or refuted
            or not eligible(entry, config, signer)
        ):
            continue
        published = publish_provisional(
            sink, display_path(root, entry.path), entry.candidate, validation_mode=mode
        )
        outcomes.append(published.as_dict())
        if published.outcome == "failed":
            continue  # tried again next time
        fields: dict[str, Any] = {OUTCOME: published.outcome}
        if published.outcome == "provisional" and published.entry_id:
            fields.update({PROVISIONAL_ENTRY: published.entry_id, AT: rfc3339(now)})
        elif published.reason:
            fields["provisional_reason"] = published.reason[:300]
        changes.append(_Change(entry.id, fields))
    if changes:
        _write(layout, locks, changes, now)
    return outcomes


def _write(layout: AgentsLayout, locks: StoreLocks, changes: list[_Change], now: datetime) -> None:
    pool = Pool(layout)
    with locks.hold(layout.pool_lock) as lease:
        pool.start_batch()
        for change in changes:
            entry = pool.get(change.candidate_id)
            if entry is None or entry.status not in _KEPT:
                continue  # promoted meanwhile
            metadata = entry.candidate.setdefault("metadata", {})
            if not isinstance(metadata, dict):
                continue
            metadata.update(change.fields)
            entry.data["updated_at"] = rfc3339(now)
            pool.write(entry, lease=lease)
        pool.flush(lease)
