"""The maturity sweep: N-phase TTL, stale todos, candidate → established → promoted, caps.

Promoted entries and *evergreen* ones (confidence ≥ ``evergreen_confidence`` and utility ≥
``evergreen_utility``, opencode-swarm's rule: they "survive sweeps") are TTL-exempt: they are
neither aged nor archived nor expired while they stay evergreen (``evergreen_ttl_exempt``).

A sweep is keyed by a *phase key* (a phase number, or e.g. a day when no plan tracks phases)
and is idempotent for it: the sweep state file records the key in two steps around the single
store rewrite (``pending`` with the fingerprint of the content about to be written, then
``last_phase``), so a crash in between is resolved by comparing fingerprints instead of
ageing entries twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from swarmq.knowledge._quarantine import archive_updates
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.files import SWEEP_STATE_FILE
from swarmq.knowledge.model import Entry, Status
from swarmq.knowledge.ranking import utility_score
from swarmq.knowledge.store import TierStore
from swarmq.knowledge.transaction import Transaction
from swarmq.storage.atomic import write_json_atomic
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.clock import try_parse_iso

DAY_MS = 86_400_000


@dataclass
class SweepResult:
    phase: str
    skipped: bool = False
    scanned: int = 0
    aged: int = 0
    archived: int = 0
    todos_removed: int = 0
    established: int = 0
    promoted: int = 0
    evicted: int = 0
    evergreen: int = 0
    """Entries left alone because they are evergreen (TTL-exempt)."""
    hive: dict[str, Any] = field(default_factory=dict)
    hive_sweep: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_evergreen(entry: Entry, config: KnowledgeConfig) -> bool:
    """opencode-swarm's evergreen rule: confidence ≥ ``evergreen_confidence`` and utility ≥
    ``evergreen_utility`` (utility is known only after ``min_retrievals_for_utility`` showings
    or from an explicit ``utility_score``)."""
    utility = utility_score(entry, config.min_retrievals_for_utility)
    return (
        utility is not None
        and entry.confidence >= config.evergreen_confidence
        and utility >= config.evergreen_utility
    )


def ttl_exempt(entry: Entry, config: KnowledgeConfig) -> bool:
    return entry.status == Status.PROMOTED or (
        config.evergreen_ttl_exempt and is_evergreen(entry, config)
    )


def age_ms(entry: Entry, now: datetime) -> float:
    """Milliseconds since ``created_at`` (an unparseable date counts as age 0)."""
    created = try_parse_iso(entry.get("created_at"))
    return 0.0 if created is None else (now - created).total_seconds() * 1000.0


def promotion_updates(
    entry: Entry, now: datetime, at: str, auto_promote_days: float
) -> dict[str, Any] | None:
    """``runAutoPromotion`` for one entry: the changes to make, or ``None``."""
    phases = len(entry.phase_numbers())
    if entry.status == Status.CANDIDATE and phases >= 3:
        return {"status": Status.ESTABLISHED.value, "updated_at": at}
    if entry.status == Status.ESTABLISHED and (
        phases >= 3 or age_ms(entry, now) >= auto_promote_days * DAY_MS
    ):
        return {"status": Status.PROMOTED.value, "updated_at": at, "hive_eligible": True}
    return None


def run_auto_promotion(
    txn: Transaction, now: datetime, at: str, auto_promote_days: float
) -> tuple[int, int]:
    established = promoted = 0
    for entry in txn.entries:
        updates = promotion_updates(entry, now, at, auto_promote_days)
        if updates is not None:
            txn.put({**entry.data, **updates})
            if updates["status"] == Status.ESTABLISHED:
                established += 1
            else:
                promoted += 1
    return established, promoted


def _age_and_archive(
    txn: Transaction, result: SweepResult, at: str, config: KnowledgeConfig
) -> None:
    """``sweepAgedEntries``: +1 phase for every entry not archived or TTL-exempt; archive past TTL."""
    default_max = config.default_max_phases
    for entry in txn.entries:
        result.scanned += 1
        if entry.status == Status.ARCHIVED:
            continue
        if ttl_exempt(entry, config):
            result.evergreen += entry.status != Status.PROMOTED
            continue
        updates: dict[str, Any] = {"phases_alive": entry.phases_alive + 1}
        result.aged += 1
        if updates["phases_alive"] > entry.max_phases(default_max):
            updates.update(archive_updates(entry, at))
            result.archived += 1
        txn.put({**entry.data, **updates})


def _remove_stale_todos(txn: Transaction, result: SweepResult, config: KnowledgeConfig) -> None:
    """``sweepStaleTodos``: todo entries past their TTL leave the store (kept in evicted)."""
    for entry in txn.entries:
        if (
            entry.category == "todo"
            and not ttl_exempt(entry, config)
            and entry.phases_alive > config.todo_max_phases
        ):
            txn.remove(entry.id, reason="todo_expired")
            result.todos_removed += 1


def _fingerprint(txn: Transaction) -> str:
    digest = hashlib.sha256()
    for entry in txn.entries:
        digest.update(entry.line().encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def _read_state(store: TierStore, state_file: str = SWEEP_STATE_FILE) -> dict[str, Any]:
    try:
        value = loads_bounded((store.files.root / state_file).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def sweep_store(
    store: TierStore,
    phase: str | int,
    *,
    now: datetime | None = None,
    promote: bool = True,
    state_file: str = SWEEP_STATE_FILE,
) -> SweepResult:
    """Age, expire, promote (unless ``promote`` is false, as for the hive) and cap one store,
    once per phase key; ``state_file`` holds the last key (one per sweeper of a shared store)."""
    key = str(phase)
    result = SweepResult(key)
    config = store.config
    state_path = store.files.root / state_file
    with store.transaction() as txn:
        state = _read_state(store, state_file)
        if state.get("last_phase") == key:
            result.skipped = True
            return result
        if state.get("pending") == key and state.get("fingerprint") == _fingerprint(txn):
            write_json_atomic(state_path, {"last_phase": key, "swept_at": store.now()})
            result.skipped = True
            return result
        moment = now or store.clock()
        at = store.now()
        if config.sweep_enabled:
            _age_and_archive(txn, result, at, config)
            _remove_stale_todos(txn, result, config)
        if promote:
            result.established, result.promoted = run_auto_promotion(
                txn, moment, at, config.auto_promote_days
            )
        cap = config.hive_max_entries if store.tier == "hive" else config.swarm_max_entries
        entries = txn.entries
        if cap is not None and len(entries) > cap:
            for entry in entries[: len(entries) - cap]:
                txn.remove(entry.id, reason="fifo_cap")
                result.evicted += 1
        write_json_atomic(state_path, {"pending": key, "fingerprint": _fingerprint(txn), "at": at})
    write_json_atomic(
        state_path, {"last_phase": key, "swept_at": store.now(), "result": result.as_dict()}
    )
    return result
