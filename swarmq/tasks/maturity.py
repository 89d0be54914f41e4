"""Knowledge-store jobs (``maturity`` family): the per-project sweep and the store operations
other jobs enqueue. Each task is thin: it builds the project's :class:`KnowledgeStore` with the
cluster's Redis store locks (the domain code takes the store lock itself, swarm before hive) and
returns a small JSON dict. Every task is idempotent under redelivery: a repeated add finds its
own near-duplicate, reinforcement and sweeps are per phase, quarantine/restore/acks are no-ops
the second time.
"""

from __future__ import annotations

from typing import Any

from swarmq.knowledge.maintenance import sweep
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.names import (
    MATURITY_EMBED,
    MATURITY_KNOWLEDGE_ACK,
    MATURITY_KNOWLEDGE_ADD,
    MATURITY_KNOWLEDGE_QUARANTINE,
    MATURITY_KNOWLEDGE_REINFORCE,
    MATURITY_KNOWLEDGE_RESTORE,
    MATURITY_SWEEP,
)
from swarmq.wiring.flywheel import acknowledge_with_feedback
from swarmq.wiring.knowledge import knowledge_store
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask


def knowledge_for(task: SwarmTask) -> KnowledgeStore:
    return knowledge_store(task.roster, task.cluster.locks)


@app.task(name=MATURITY_SWEEP, bind=True)
def sweep_task(self: SwarmTask, phase: int | str | None = None) -> dict[str, Any]:
    """TTL ageing, stale todos, promotion, caps and hive promotion, once per phase key
    (``plan.json``'s current phase, else the UTC day)."""
    return sweep(knowledge_for(self), phase).as_dict()


EMBED_PER_RUN = 2000
"""Entries one ``maturity.embed`` run embeds at most (~1 min of CPU under MiniLM): bounded, so
the task stays far inside the family's time limit; the next run goes on."""
EMBED_LOCK = "maturity.embed"
"""The Redis lock one ``maturity.embed`` run holds: a run that finds it held returns at once
(``busy``) instead of embedding the same backlog beside it on another worker."""


@app.task(name=MATURITY_EMBED, bind=True)
def embed_task(self: SwarmTask, limit: int = EMBED_PER_RUN) -> dict[str, Any]:
    """Fill the entry vectors hybrid retrieval lacks (a slow model's backlog) into the
    persisted indexes, off every query's path. On the beat by default under MiniLM or an
    endpoint (:mod:`swarmq.roster.schedule`); never two runs at once in a swarm (a second
    one while the first holds :data:`EMBED_LOCK` is skipped, and a run whose lease lapses
    stops after its current batch)."""
    from swarmq.knowledge.vectors import fill
    from swarmq.storage.locking import LockTimeout

    locks = self.cluster.locks
    try:
        lease = locks.acquire(EMBED_LOCK, timeout=0)
    except LockTimeout:
        return {"busy": True}
    try:
        report = fill(knowledge_for(self), limit, stop=lease.lost.is_set)
    finally:
        locks.release(lease)
    return {**report.as_dict(), "busy": False}


@app.task(name=MATURITY_KNOWLEDGE_ADD, bind=True)
def knowledge_add(
    self: SwarmTask,
    lesson: str,
    category: str | None = None,
    tags: list[str] | None = None,
    phase: int | None = None,
    confidence: float | None = None,
    auto_generated: bool = True,
    directives: dict[str, Any] | None = None,
    tier: str = "swarm",
) -> dict[str, Any]:
    knowledge = knowledge_for(self)
    result = knowledge.tier(tier).add(
        NewLesson(
            lesson,
            category=category,
            tags=tags,
            confidence=confidence,
            auto_generated=auto_generated,
            directives=directives or {},
        ),
        phase=phase,
    )
    return {
        "outcome": result.outcome,
        "id": result.entry.id if result.entry else None,
        "reason": result.reason,
        "layer": result.validation.layer,
    }


@app.task(name=MATURITY_KNOWLEDGE_REINFORCE, bind=True)
def knowledge_reinforce(self: SwarmTask, entry_id: str, phase: int) -> dict[str, Any]:
    result = knowledge_for(self).swarm.reinforce(entry_id, phase)
    return {
        "outcome": result.outcome,
        "id": entry_id,
        "confirmations": len(result.entry.confirmed_by) if result.entry else 0,
    }


@app.task(name=MATURITY_KNOWLEDGE_QUARANTINE, bind=True)
def knowledge_quarantine(
    self: SwarmTask, entry_id: str, reason: str, reported_by: str = "auto"
) -> dict[str, Any]:
    from swarmq.knowledge.errors import EntryNotFound

    try:
        entry = knowledge_for(self).swarm.quarantine(entry_id, reason, reported_by)
    except EntryNotFound:
        return {"outcome": "not_found", "id": entry_id}
    return {"outcome": "quarantined", "id": entry.id}


@app.task(name=MATURITY_KNOWLEDGE_RESTORE, bind=True)
def knowledge_restore(self: SwarmTask, entry_id: str, revalidate: bool = False) -> dict[str, Any]:
    from swarmq.knowledge.errors import EntryNotFound, RestoreRefused

    try:
        entry = knowledge_for(self).swarm.restore(entry_id, revalidate=revalidate)
    except EntryNotFound:
        return {"outcome": "not_found", "id": entry_id}
    except RestoreRefused as exc:
        return {"outcome": "refused", "id": entry_id, "reason": exc.reason}
    return {"outcome": "restored", "id": entry.id, "status": entry.status}


@app.task(name=MATURITY_KNOWLEDGE_ACK, bind=True)
def knowledge_ack(
    self: SwarmTask, text: str, agent: str | None = None, source: str = "architect_marker"
) -> dict[str, Any]:
    """Commit the acknowledgement markers found in an agent's output (those of flywheel
    lessons are fed back to the lessons as citations)."""
    results = acknowledge_with_feedback(
        self.roster,
        self.cluster.locks,
        text,
        knowledge=knowledge_for(self),
        source=source,
        agent=agent,
    )
    return {"results": [r.as_dict() for r in results]}
