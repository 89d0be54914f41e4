"""Creating entries and reinforcing them by phase confirmation (opencode-swarm's rules)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from swarmq.knowledge._factrule import CATEGORY, FACT_TAG, fact_kind
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.model import (
    DIRECTIVE_KEY_ORDER,
    INACTIVE_STATUSES,
    Entry,
    Status,
    Tier,
    order_keys,
    v1_outcomes,
)
from swarmq.knowledge.signature import SIGNATURE_FIELD, failure_signature
from swarmq.knowledge.tags import infer_category, infer_tags


def compute_confidence(confirmations: int, auto_generated: bool) -> float:
    """``computeConfidence``: 0.5 + 0.1 per confirmation (max 3) + 0.1 if written by a human,
    with the same float steps as JavaScript (0.5 + 0.30000000000000004 …)."""
    score = 0.5
    score += min(confirmations, 3) * 0.1
    if not auto_generated:
        score += 0.1
    return min(score, 1.0)


@dataclass(slots=True)
class NewLesson:
    """What a caller wants stored; everything not given is derived as the curator does."""

    lesson: str
    category: str | None = None
    """Default: the first inferred tag naming a category, else ``process``."""
    tags: list[str] | None = None
    """Default: ``inferTags(lesson)``."""
    scope: str = "global"
    confidence: float | None = None
    """Default: ``computeConfidence(confirmations, auto_generated)`` (0.6 for a curated lesson)."""
    auto_generated: bool = True
    hive_eligible: bool | None = None
    max_phases: int | None = None
    directives: Mapping[str, Any] = field(default_factory=dict)
    """v2 fields: triggers, required_actions, applies_to_tools, directive_priority, …"""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Any further keys, written after the known ones (e.g. ``source_refs`` provenance)."""
    id: str | None = None
    require_actionable: bool = False
    """Run the actionability layer: an entry without predicate + scope goes to the
    unactionable queue instead of the store."""
    project_fact: bool | None = None
    """Whether the lesson holds for every session of the project (tagged ``project-fact`` and
    shown at session start); ``None``: recognised from the text (:mod:`._factrule`)."""


def phase_confirmation(phase: int, at: str, project_name: str) -> dict[str, Any]:
    """PhaseConfirmationRecord, in the key order real files use."""
    return {"phase_number": phase, "confirmed_at": at, "project_name": project_name}


def new_entry(
    new: NewLesson,
    *,
    tier: Tier,
    project_name: str,
    phase: int | None,
    at: str,
    config: KnowledgeConfig,
) -> Entry:
    """A fresh entry in opencode-swarm's key order."""
    inferred = infer_tags(new.lesson)
    tags = list(new.tags) if new.tags is not None else inferred
    kind = fact_kind(new.lesson) if new.project_fact is not False else None
    is_fact = new.project_fact is True or kind is not None
    if is_fact and FACT_TAG not in tags:
        tags.append(FACT_TAG)
    category = new.category or (CATEGORY[kind] if kind is not None else None)
    confirmed = [phase_confirmation(phase, at, project_name)] if phase is not None else []
    confidence = (
        new.confidence
        if new.confidence is not None
        else compute_confidence(len(confirmed), new.auto_generated)
    )
    data: dict[str, Any] = {
        "id": new.id or str(uuid.uuid4()),
        "tier": tier.value,
        "lesson": new.lesson,
        "category": category or infer_category(new.lesson, inferred),
        "tags": tags,
        "scope": new.scope,
        "confidence": confidence,
        "status": Status.CANDIDATE.value,
        "confirmed_by": confirmed,
        "retrieval_outcomes": v1_outcomes(),
        "schema_version": config.schema_version,
        "created_at": at,
        "updated_at": at,
    }
    if tier is Tier.HIVE:
        data["source_project"] = project_name
        data["encounter_score"] = config.initial_encounter_score
    else:
        data["project_name"] = project_name
        data["auto_generated"] = new.auto_generated
    if new.hive_eligible is not None:
        data["hive_eligible"] = new.hive_eligible
    if new.max_phases is not None:
        data["max_phases"] = new.max_phases
    for key in DIRECTIVE_KEY_ORDER:
        if key in new.directives:
            data[key] = new.directives[key]
    for key, value in new.directives.items():
        data.setdefault(key, value)
    for key, value in new.extra.items():
        data.setdefault(key, value)
    if SIGNATURE_FIELD not in data:
        signature = failure_signature(new.lesson)
        if signature is not None:
            data[SIGNATURE_FIELD] = signature
    return Entry(order_keys(data, tier))


ReinforceOutcome = Literal["reinforced", "already_confirmed_phase", "inactive"]


def reinforce_entry(
    entry: Entry, confirmation: Mapping[str, Any], *, max_confirmed_by: int
) -> tuple[Entry, ReinforceOutcome]:
    """``reinforceSwarmKnowledgeEntry``: append a phase confirmation unless the entry is
    inactive or already confirmed in that phase; refresh ``updated_at``, reset
    ``phases_alive`` and recompute confidence from the distinct phases."""
    if entry.status in INACTIVE_STATUSES:
        return entry, "inactive"
    phase = confirmation.get("phase_number")
    if any(r.get("phase_number") == phase for r in entry.confirmed_by):
        return entry, "already_confirmed_phase"
    records = [*_raw_confirmations(entry), dict(confirmation)]
    if len(records) > max_confirmed_by:
        records = records[len(records) - max_confirmed_by :]
    provisional = Entry({**entry.data, "confirmed_by": records})
    updates: dict[str, Any] = {
        "confirmed_by": records,
        "updated_at": confirmation.get("confirmed_at", entry.updated_at),
        "phases_alive": 0,
        "confidence": compute_confidence(
            len(provisional.phase_numbers()), entry.get("auto_generated") is True
        ),
    }
    return entry.changed(updates), "reinforced"


def _raw_confirmations(entry: Entry) -> list[Any]:
    value = entry.get("confirmed_by")
    return list(value) if isinstance(value, list) else []
