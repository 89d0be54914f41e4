"""Swarm → hive promotion (``checkHivePromotions``) and the manual promote routes.

Routes: (1) ``hive_eligible`` and ≥ 3 distinct confirmed phases, (2) the ``hive-fast-track``
tag, (3) age ≥ ``auto_promote_days``. A promoted lesson becomes a new hive candidate unless the
hive already holds a near-duplicate; then every active hive entry that an active swarm entry of
this project near-duplicates gets that project's encounter (weighted score, clamped), and a
hive candidate confirmed by three projects becomes established. Locks: swarm first, then hive.

Only confirmations are encounters: a near-duplicate lesson (here), an explicit confirmation
(:func:`confirm_hive_entry`) or a ``KNOWLEDGE_APPLIED`` acknowledgement. Being shown in an
injection only counts ``shown_count``.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from swarmq.knowledge._lifecycle import DAY_MS, age_ms
from swarmq.knowledge._sidecars import rejected_record
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.errors import InvalidEntry
from swarmq.knowledge.model import HIVE_KEY_ORDER, Entry, Status, Tier, v1_outcomes
from swarmq.knowledge.validation import (
    ValidationResult,
    check_hostile,
    check_safety,
    check_structure,
)

if TYPE_CHECKING:
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.store import TierStore

FAST_TRACK_TAG = "hive-fast-track"


@dataclass
class HiveSummary:
    timestamp: str
    new_promotions: int = 0
    encounters_incremented: int = 0
    advancements: int = 0
    total_hive_entries: int = 0
    rejected: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def hive_route(entry: Entry, now: datetime, auto_promote_days: float) -> str | None:
    """Which promotion route an active swarm entry qualifies by, if any."""
    if not entry.is_active:
        return None
    if entry.get("hive_eligible") is True and len(entry.phase_numbers()) >= 3:
        return "explicit"
    if FAST_TRACK_TAG in entry.tags:
        return "fast_track"
    if age_ms(entry, now) >= auto_promote_days * DAY_MS:
        return "age"
    return None


def hive_entry(
    lesson: str,
    category: str,
    tags: list[str],
    scope: str,
    *,
    source_project: str,
    at: str,
    confidence: float,
    status: str,
    schema_version: int,
    encounter_score: float,
) -> Entry:
    data = {
        "id": str(uuid.uuid4()),
        "tier": Tier.HIVE.value,
        "lesson": lesson,
        "category": category,
        "tags": list(tags),
        "scope": scope,
        "confidence": confidence,
        "status": status,
        "confirmed_by": [],
        "retrieval_outcomes": v1_outcomes(),
        "schema_version": schema_version,
        "created_at": at,
        "updated_at": at,
        "source_project": source_project,
        "encounter_score": encounter_score,
    }
    return Entry({k: data[k] for k in HIVE_KEY_ORDER})


def _validate_for_hive(hive: TierStore, entry: Entry) -> ValidationResult:
    mode = hive.config.validation_mode
    for result in (
        check_structure(
            entry.lesson, entry.get("category"), entry.get("scope"), entry.get("confidence")
        ),
        check_safety(entry.lesson, mode),
        check_hostile(entry.lesson),  # the hive reaches every project: never an instruction
    ):
        if not result.valid:
            return result
    return ValidationResult(True)


def check_hive_promotions(knowledge: KnowledgeStore, *, now: datetime | None = None) -> HiveSummary:
    """One promotion pass for this project (no-op when ``hive_enabled`` is false)."""
    config = knowledge.config
    swarm, hive = knowledge.swarm, knowledge.hive
    moment = now or swarm.clock()
    summary = HiveSummary(swarm.now())
    if not config.hive_enabled:
        return summary
    candidates = [
        e for e in swarm.read().entries if hive_route(e, moment, config.auto_promote_days)
    ]
    with hive.transaction() as txn:
        for entry in candidates:
            if hive.find_duplicate(entry.lesson, active_only=False) is not None or any(
                _similar(hive, entry.lesson, new.lesson) for new in txn.appended
            ):
                continue
            fresh = hive_entry(
                entry.lesson,
                entry.category,
                entry.tags,
                entry.scope,
                source_project=entry.project_name or knowledge.project_name,
                at=summary.timestamp,
                confidence=0.5,
                status=Status.CANDIDATE.value,
                schema_version=config.schema_version,
                encounter_score=config.initial_encounter_score,
            )
            verdict = _validate_for_hive(hive, fresh)
            if not verdict.valid:
                hive.tier_file.append_sidecar(
                    hive.files.rejected,
                    [
                        rejected_record(
                            fresh.id,
                            fresh.lesson,
                            verdict.reason or "",
                            verdict.layer or 2,
                            summary.timestamp,
                        )
                    ],
                    config.rejected_max_entries,
                    txn.lease,
                )
                summary.rejected += 1
                continue
            txn.append(fresh)
            summary.new_promotions += 1
        _count_encounters(knowledge, txn, summary)
        summary.total_hive_entries = len(txn.entries)
    return summary


def _similar(store: TierStore, a: str, b: str) -> bool:
    from swarmq.similarity.text import bigram_jaccard

    return bigram_jaccard(a, b) >= store.config.dedup_threshold


def encounter_updates(
    entry: Entry, project: str, at: str, config: KnowledgeConfig
) -> dict[str, Any] | None:
    """One project's confirmation of an active hive entry, opencode-swarm's arithmetic: a new
    ``{project_name, confirmed_at}`` record, ``encounter_score`` + ``encounter_increment`` ×
    (``same_project_weight`` for the source project, else ``cross_project_weight``) clamped to
    [min, max], and candidate → established at three distinct projects. ``None`` when the entry
    is inactive or this project already confirmed it (a project counts once)."""
    if not entry.is_active or project in entry.confirming_projects():
        return None
    weight = (
        config.same_project_weight
        if project == entry.source_project
        else config.cross_project_weight
    )
    old = entry.encounter_score if entry.encounter_score is not None else 1.0
    score = min(
        max(old + config.encounter_increment * weight, config.min_encounter_score),
        config.max_encounter_score,
    )
    records = [*entry.confirmed_by, {"project_name": project, "confirmed_at": at}]
    updates: dict[str, Any] = {"confirmed_by": records, "encounter_score": score, "updated_at": at}
    projects = {r["project_name"] for r in records if isinstance(r.get("project_name"), str)}
    if entry.status == Status.CANDIDATE and len(projects) >= 3:
        updates["status"] = Status.ESTABLISHED.value
    return updates


def _count_encounters(knowledge: KnowledgeStore, txn: Any, summary: HiveSummary) -> None:
    swarm = knowledge.swarm
    for hive_item in txn.entries:
        if not hive_item.is_active:
            continue
        twin = swarm.find_duplicate(hive_item.lesson, active_only=True)
        if twin is None:
            continue
        updates = encounter_updates(
            hive_item,
            twin.project_name or knowledge.project_name,
            summary.timestamp,
            knowledge.config,
        )
        if updates is None:
            continue
        summary.encounters_incremented += 1
        summary.advancements += updates.get("status") == Status.ESTABLISHED
        txn.put({**hive_item.data, **updates})


def confirm_hive_entry(
    knowledge: KnowledgeStore, entry_id: str, project: str | None = None
) -> tuple[Entry, bool]:
    """An explicit confirmation of a hive entry by this project (an encounter, counted once
    per project); returns the entry and whether it changed."""
    with knowledge.hive.transaction() as txn:
        entry = txn.get(entry_id)
        if entry is None:
            from swarmq.knowledge.errors import EntryNotFound

            raise EntryNotFound(f"no hive entry {entry_id}")
        updates = encounter_updates(
            entry, project or knowledge.project_name, knowledge.hive.now(), knowledge.config
        )
        if updates is None:
            return entry, False
        return txn.put({**entry.data, **updates}), True


def promote_lesson(
    knowledge: KnowledgeStore,
    lesson: str,
    category: str = "process",
    *,
    source_project: str | None = None,
    tags: list[str] | None = None,
    scope: str = "global",
) -> Entry:
    """``promoteToHive``: a human-vetted lesson straight into the hive as ``promoted``."""
    hive = knowledge.hive
    fresh = hive_entry(
        lesson,
        category,
        tags if tags is not None else [],
        scope,
        source_project=source_project or knowledge.project_name,
        at=hive.now(),
        confidence=1.0,
        status=Status.PROMOTED.value,
        schema_version=1,
        encounter_score=1.0,
    )
    with hive.transaction() as txn:
        verdict = _validate_for_hive(hive, fresh)
        if not verdict.valid:
            raise InvalidEntry(fresh.id, [verdict.reason or "invalid lesson"])
        twin = hive.find_duplicate(lesson, active_only=False, threshold=0.6)
        if twin is not None:
            raise InvalidEntry(fresh.id, [f"near-duplicate of hive entry {twin.id}"])
        return txn.append(fresh)


def promote_from_swarm(knowledge: KnowledgeStore, entry_id: str) -> Entry:
    """``promoteFromSwarm``: copy a swarm entry into the hive as ``promoted``."""
    entry = knowledge.swarm.get(entry_id)
    if entry is None:
        from swarmq.knowledge.errors import EntryNotFound

        raise EntryNotFound(f"no swarm entry {entry_id}")
    return promote_lesson(
        knowledge,
        entry.lesson,
        entry.category,
        source_project=entry.project_name or knowledge.project_name,
        tags=entry.tags,
        scope=entry.scope,
    )
