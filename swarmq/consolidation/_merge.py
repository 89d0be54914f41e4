"""What merging, superseding and linking do to two knowledge entries (pure functions).

Merge (duplicates): the survivor takes the union of both confirmation histories (capped as
opencode-swarm caps them, oldest dropped), the sum of every retrieval counter, the union of
tags and directive lists, the older ``created_at``, the higher confidence (or the one its
distinct confirmations now earn), and the better of the two lesson texts. The other entry is
archived, not deleted: ``status: archived`` with ``pre_archive_status`` (so the store's
``restore`` brings it back), ``superseded_by`` pointing at the survivor and the reason.

Supersede (conflicts, contradictions): the newer entry records ``supersedes``, the older one is
archived the same way; nothing is merged, since the older lesson is the outdated one.

Link (complements): both entries list each other in ``complements``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.model import DIRECTIVE_LIST_FIELDS, PRE_ARCHIVE_KEY, Entry, Status
from swarmq.knowledge.reinforcement import compute_confidence
from swarmq.knowledge.validation import check_safety, check_structure, is_vague
from swarmq.similarity.text import word_tokens

SUPERSEDED_BY = "superseded_by"
SUPERSEDES = "supersedes"
COMPLEMENTS = "complements"
RUN_KEY = "consolidation_run"
"""The last consolidation run that changed the entry (lets a crashed run be recognised)."""
KEEP_APART = "consolidation_keep_apart"
"""Ids a restored entry must never again be merged with or superseded by."""

_STATUS_RANK = {Status.PROMOTED.value: 2, Status.ESTABLISHED.value: 1}
_PRIORITY_RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}
_LIST_CAP = 20
"""The validator's limit on v2 list fields."""


def strength(entry: Entry) -> tuple[float, ...]:
    """Status, distinct confirmations, confidence, explicit applications, exposures."""
    confirmations = (
        len(entry.confirming_projects()) if entry.tier == "hive" else len(entry.phase_numbers())
    )
    raw = entry.get("retrieval_outcomes")
    outcomes: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    shown = outcomes.get("shown_count", outcomes.get("applied_count"))
    return (
        float(_STATUS_RANK.get(entry.status, 0)),
        float(confirmations),
        entry.confidence,
        float(_num(outcomes.get("applied_explicit_count"))),
        float(_num(shown)),
    )


def lesson_quality(entry: Entry, lesson: str, config: KnowledgeConfig) -> tuple[int, int, int]:
    """Valid by the gate's layers 1-2, then not vague, then more distinct words."""
    valid = (
        check_structure(
            lesson, entry.get("category"), entry.get("scope"), entry.get("confidence")
        ).valid
        and check_safety(lesson, config.validation_mode).valid
    )
    return (int(valid), int(not is_vague(lesson)), len(word_tokens(lesson)))


def _union(first: Any, second: Any, cap: int | None = None) -> list[Any] | None:
    if not isinstance(first, list) and not isinstance(second, list):
        return None
    out: list[Any] = []
    for value in [
        *(first if isinstance(first, list) else []),
        *(second if isinstance(second, list) else []),
    ]:
        if value not in out:
            out.append(value)
    return out[:cap] if cap is not None else out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _num(value: Any) -> int | float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def sum_outcomes(first: Any, second: Any, config: KnowledgeConfig) -> dict[str, Any]:
    """Every numeric counter summed (keys of both, survivor's order first)."""
    a = dict(first) if isinstance(first, Mapping) else {}
    b = dict(second) if isinstance(second, Mapping) else {}
    out: dict[str, Any] = {}
    for key in [*a, *(k for k in b if k not in a)]:
        x, y = a.get(key), b.get(key)
        if _number(x) or _number(y):
            out[key] = _num(x) + _num(y)
        elif key == "violation_timestamps":
            stamps = sorted({s for s in (_union(x, y) or []) if isinstance(s, str)}, reverse=True)
            out[key] = stamps[: config.max_violation_timestamps]
        elif isinstance(x, str) and isinstance(y, str):
            out[key] = max(x, y)  # ISO timestamps such as last_applied_at: the later one
        else:
            out[key] = x if key in a else y
    return out


def _confirmations(first: Entry, second: Entry, config: KnowledgeConfig) -> list[dict[str, Any]]:
    seen: set[tuple[Any, Any]] = set()
    records: list[dict[str, Any]] = []
    for record in [*first.confirmed_by, *second.confirmed_by]:
        key = (record.get("phase_number"), record.get("project_name"))
        if key not in seen:
            seen.add(key)
            records.append(record)
    records.sort(key=lambda r: str(r.get("confirmed_at") or ""))
    return records[-config.max_confirmed_by :]


def archived_updates(entry: Entry, by: str, reason: str, at: str, run_id: str) -> dict[str, Any]:
    updates: dict[str, Any] = {
        "status": Status.ARCHIVED.value,
        "updated_at": at,
        SUPERSEDED_BY: by,
        "superseded_at": at,
        "supersede_reason": reason,
        RUN_KEY: run_id,
    }
    if entry.status != Status.ARCHIVED.value:
        updates[PRE_ARCHIVE_KEY] = entry.status
    return updates


def merge_entries(
    survivor: Entry, other: Entry, *, at: str, run_id: str, reason: str, config: KnowledgeConfig
) -> tuple[Entry, Entry]:
    """The survivor after absorbing ``other``, and ``other`` archived with a pointer."""
    updates: dict[str, Any] = {}
    if survivor.confirmed_by or other.confirmed_by:
        updates["confirmed_by"] = _confirmations(survivor, other, config)
    if "retrieval_outcomes" in survivor.data or "retrieval_outcomes" in other.data:
        updates["retrieval_outcomes"] = sum_outcomes(
            survivor.get("retrieval_outcomes"), other.get("retrieval_outcomes"), config
        )
    tags = _union(survivor.get("tags"), other.get("tags"))
    if tags is not None:
        updates["tags"] = tags
    for key in DIRECTIVE_LIST_FIELDS:
        merged = _union(survivor.get(key), other.get(key), _LIST_CAP)
        if merged is not None:
            updates[key] = merged
    if other.get("directive_priority") in _PRIORITY_RANK and (
        _PRIORITY_RANK[other.get("directive_priority")]
        > _PRIORITY_RANK.get(survivor.get("directive_priority"), -1)
    ):
        updates["directive_priority"] = other.get("directive_priority")
    confidence = max(survivor.confidence, other.confidence)
    if survivor.tier != "hive":
        phases = {*survivor.phase_numbers(), *other.phase_numbers()}
        earned = compute_confidence(len(phases), survivor.auto_generated and other.auto_generated)
        confidence = max(confidence, earned) if phases else confidence
    if confidence != survivor.confidence:
        updates["confidence"] = confidence
    if _number(survivor.get("encounter_score")) and _number(other.get("encounter_score")):
        updates["encounter_score"] = min(
            config.max_encounter_score,
            survivor.get("encounter_score") + other.get("encounter_score"),
        )
    created = [c for c in (survivor.created_at, other.created_at) if c]
    if created and min(created) != survivor.created_at:
        updates["created_at"] = min(created)
    if _number(survivor.get("phases_alive")) and _number(other.get("phases_alive")):
        updates["phases_alive"] = min(survivor.get("phases_alive"), other.get("phases_alive"))
    if other.get("hive_eligible") is True and survivor.get("hive_eligible") is not True:
        updates["hive_eligible"] = True
    if lesson_quality(other, other.lesson, config) > lesson_quality(
        survivor, survivor.lesson, config
    ):
        updates["lesson"] = other.lesson
    updates.update(
        {
            "updated_at": at,
            SUPERSEDES: [*_list(survivor.get(SUPERSEDES)), other.id],
            RUN_KEY: run_id,
        }
    )
    kept = survivor.changed(updates, bump_revision=False)
    gone = other.changed(
        archived_updates(other, survivor.id, reason, at, run_id), bump_revision=False
    )
    return kept, gone


def supersede_entries(
    newer: Entry, older: Entry, *, at: str, run_id: str, reason: str
) -> tuple[Entry, Entry]:
    kept = newer.changed(
        {SUPERSEDES: [*_list(newer.get(SUPERSEDES)), older.id], RUN_KEY: run_id},
        bump_revision=False,
    )
    gone = older.changed(archived_updates(older, newer.id, reason, at, run_id), bump_revision=False)
    return kept, gone


def link_entries(a: Entry, b: Entry, *, run_id: str) -> tuple[Entry | None, Entry | None]:
    """Both entries with the other in ``complements`` (``None`` where already linked)."""
    return _linked(a, b.id, run_id), _linked(b, a.id, run_id)


def _linked(entry: Entry, other_id: str, run_id: str) -> Entry | None:
    current = _list(entry.get(COMPLEMENTS))
    if other_id in current:
        return None
    return entry.changed({COMPLEMENTS: [*current, other_id], RUN_KEY: run_id}, bump_revision=False)


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []
