"""Lessons an agent or a person records on purpose: the highest-precision input the swarm has.

A recorded lesson goes through the same validation, dedup, reinforcement and group commit as
every other add and is injectable at once (no forge, no promotion gate). It carries who recorded
it in ``recorded_by`` (``{"kind": "agent" | "person", "via": "mcp" | "cli", ...}``), a key
opencode-swarm ignores and every rewrite keeps, so recorded lessons can be counted apart from
mined ones. Evidence that holds the failing call makes the lesson recallable by that failure
when the lesson's own words do not state it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from swarmq.knowledge.batch import AddResult
from swarmq.knowledge.model import Entry, Status
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.knowledge.signature import SIGNATURE_FIELD, failure_signature

RECORDED_BY = "recorded_by"
"""The entry key naming who recorded a lesson on purpose."""
RECORDER_KINDS = ("agent", "person")
EVIDENCE_MAX = 2000
"""Characters of evidence kept with the lesson (the failing call and its error fit)."""


def record_lesson(
    knowledge: KnowledgeStore,
    lesson: str,
    *,
    recorded_by: Mapping[str, str],
    category: str | None = None,
    tags: list[str] | None = None,
    evidence: str | None = None,
) -> AddResult:
    """Add ``lesson`` to the swarm tier as recorded by ``recorded_by``; returns once durable.

    A person's lesson is not machine-generated (``auto_generated: false``); an agent's is.
    """
    kind = recorded_by.get("kind")
    if kind not in RECORDER_KINDS:
        raise ValueError(f"recorded_by.kind must be one of {RECORDER_KINDS}, not {kind!r}")
    extra: dict[str, Any] = {RECORDED_BY: dict(recorded_by)}
    if evidence:
        evidence = evidence[:EVIDENCE_MAX]
        extra["evidence"] = evidence
        signature = None if failure_signature(lesson) else failure_signature(evidence)
        if signature is not None:
            extra[SIGNATURE_FIELD] = signature
    return knowledge.swarm.add(
        NewLesson(
            lesson,
            category=category,
            tags=tags,
            auto_generated=kind != "person",
            extra=extra,
        ),
        phase=knowledge.current_phase(),
    )


def recorded_counts(entries: Iterable[Entry]) -> dict[str, int]:
    """Live entries recorded on purpose, by who recorded them (``agent``, ``person``)."""
    counts: Counter[str] = Counter({kind: 0 for kind in RECORDER_KINDS})
    for entry in entries:
        if entry.status in (Status.ARCHIVED, Status.QUARANTINED):
            continue
        who = entry.get(RECORDED_BY)
        if isinstance(who, dict) and who.get("kind") in RECORDER_KINDS:
            counts[str(who["kind"])] += 1
    return dict(counts)
