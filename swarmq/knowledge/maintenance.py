"""Project-level maintenance: the full maturity sweep and the health audit."""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import datetime
from typing import Any

from swarmq.knowledge._lifecycle import SweepResult, is_evergreen, sweep_store
from swarmq.knowledge.hive import check_hive_promotions
from swarmq.knowledge.model import Entry
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.ranking import utility_score
from swarmq.knowledge.store import TierStore


def current_phase(knowledge: KnowledgeStore) -> int | None:
    """``current_phase`` of ``.swarm/plan.json`` when a plan tracks phases."""
    return knowledge.current_phase()


def sweep(
    knowledge: KnowledgeStore, phase: str | int | None = None, *, now: datetime | None = None
) -> SweepResult:
    """Sweep the swarm tier once per phase key, then sweep the hive (age, archive, expire
    todos and cap, as opencode-swarm's phase completion does; no auto-promotion there) and run
    hive promotion. The hive is shared, so each project keeps its own hive sweep state: a
    project's phase ages hive entries once, however many projects sweep."""
    key = phase if phase is not None else current_phase(knowledge)
    if key is None:
        key = f"day:{knowledge.swarm.now()[:10]}"
    result = sweep_store(knowledge.swarm, key, now=now)
    if result.skipped or not knowledge.config.hive_enabled:
        return result
    project = hashlib.sha256(knowledge.project_name.encode("utf-8")).hexdigest()[:16]
    hive_sweep = sweep_store(
        knowledge.hive, key, now=now, promote=False, state_file=f"shared-sweep-state-{project}.json"
    )
    result.hive_sweep = hive_sweep.as_dict()
    summary = check_hive_promotions(knowledge, now=now)
    result.hive = summary.as_dict()
    return result


def health_problems(entry: Entry) -> list[str]:
    """``auditEntryHealth``: the reasons an entry is unhealthy."""
    problems = []
    explicit = entry.get("utility_score")
    if (
        entry.counter("shown_count") >= 5
        and isinstance(explicit, int | float)
        and not isinstance(explicit, bool)
        and explicit <= 0
    ):
        problems.append("Low-utility entry")
    if entry.confidence < 0.1:
        problems.append("Near-zero confidence")
    if entry.auto_generated and not entry.confirmed_by:
        problems.append("Unconfirmed auto-generated")
    return problems


def audit_tier(store: TierStore) -> dict[str, Any]:
    """Counts, corrupt lines, duplicate ids, unhealthy / evergreen / low-utility entries."""
    config = store.config
    snapshot = store.read()
    unhealthy, evergreen, low_utility = [], [], []
    for entry in snapshot.entries:
        problems = health_problems(entry)
        if problems:
            unhealthy.append({"id": entry.id, "problems": problems})
        utility = utility_score(entry, config.min_retrievals_for_utility)
        if is_evergreen(entry, config):
            evergreen.append(entry.id)
        if (
            utility is not None
            and utility <= config.low_utility_threshold
            and entry.counter("shown_count") >= 5
        ):
            low_utility.append(entry.id)
    ids = Counter(e.id for e in snapshot.entries)
    return {
        "tier": str(store.tier),
        "file": str(store.files.knowledge),
        "entries": len(snapshot.entries),
        "by_status": dict(Counter(e.status for e in snapshot.entries)),
        "by_category": dict(Counter(e.category for e in snapshot.entries)),
        "corrupt": [{"line": c.line_no, "error": c.error} for c in snapshot.corrupt],
        "duplicate_ids": sorted(i for i, n in ids.items() if n > 1),
        "unhealthy": unhealthy,
        "evergreen": evergreen,
        "low_utility": low_utility,
    }


def audit(knowledge: KnowledgeStore) -> dict[str, Any]:
    from swarmq.knowledge.vectors import missing

    config = knowledge.config
    return {
        "project": knowledge.project_name,
        "tiers": [audit_tier(store) for store in knowledge.tiers],
        "retrieval": {
            "mode": config.retrieval.value,
            "dense_model": config.dense_model.value,
            "model": config.model.value,
            "vectors_missing": missing(knowledge),
        },
    }
