"""Injection that closes the loop: query, render within budget, commit the trace's membership
to the receipt journal, then count every shown entry (``shown_count`` + 1) and log a retrieval
event.

opencode-swarm's own users found ``shown_count`` stuck at 0 because nothing wrote back what was
shown; here the block is returned only after both are recorded (:func:`inject`), or, for a caller
that must not wait on the record's fsync (a mission's prompt before its agent's ``exec``), built
by :func:`prepare` and recorded by :func:`record_injection` before the caller reports anything
done. Being shown is not being
confirmed (a weak match would otherwise confirm and, in the hive, take a project's encounter):
confirmations come from ``KNOWLEDGE_APPLIED`` (:mod:`acks`), explicit reinforcement and
near-duplicate lessons.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swarmq.knowledge._receipts import ReceiptLedger
from swarmq.knowledge.model import Entry, Tier, normalize_outcomes
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked, search
from swarmq.knowledge.render import Budget, budget_for, render_directives
from swarmq.knowledge.serialize import dumps_js
from swarmq.knowledge.store import TierStore
from swarmq.storage.atomic import append_lines

QUERY_EVENT_CHARS = 800


@dataclass(frozen=True, slots=True)
class Injection:
    trace_id: str
    budget: Budget
    block: str | None
    """The ``<swarm_knowledge_directives>`` block, or ``None`` when nothing is injected."""
    shown: list[Ranked] = field(default_factory=list)
    candidates: list[Ranked] = field(default_factory=list)
    skipped: bool = False
    """Nothing was searched (no headroom, or knowledge disabled)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "regime": self.budget.regime,
            "max_entries": self.budget.max_entries,
            "max_chars": self.budget.max_chars,
            "block": self.block,
            "shown": [r.as_dict() for r in self.shown],
        }


def ledger(knowledge: KnowledgeStore) -> ReceiptLedger:
    return ReceiptLedger(
        knowledge.receipts_path,
        locks=knowledge.locks,
        clock=knowledge.clock,
        grace_days=knowledge.config.receipt_close_grace_days,
    )


def log_event(store: TierStore, event_type: str, **fields: Any) -> dict[str, Any]:
    """Append one ``knowledge-events.jsonl`` record (diagnostics; not authoritative)."""
    record = {
        "schema_version": 1,
        "type": event_type,
        **fields,
        "event_id": str(uuid.uuid4()),
        "timestamp": store.now(),
    }
    with store.tier_file.held() as lease:
        append_lines(store.files.events, [dumps_js(record)], lease=lease)
    return record


def inject(
    knowledge: KnowledgeStore,
    context: QueryContext,
    *,
    headroom: float = 1.0,
    session_id: str | None = None,
    record: bool = True,
) -> Injection:
    """Build the directive block for ``context`` given the free fraction of the context
    window; with ``record`` (the default) the shown entries are committed and counted."""
    injection = prepare(knowledge, context, headroom=headroom)
    if not record:
        return injection
    return record_injection(knowledge, injection, context, session_id=session_id)


def prepare(
    knowledge: KnowledgeStore, context: QueryContext, *, headroom: float = 1.0
) -> Injection:
    """The block alone: a pure read of the warm in-memory index, no lock, no write.

    A caller that shows the block before recording it (a mission's prompt, recorded once the
    agent runs) must pass the result to :func:`record_injection` before it reports anything done.
    """
    trace_id = str(uuid.uuid4())
    budget = budget_for(headroom, knowledge.config, context.mode)
    if budget.regime == "skipped" or not knowledge.config.enabled:
        return Injection(trace_id, budget, None, skipped=True)
    candidates = search(knowledge, context, limit=budget.max_entries)
    block, shown = render_directives(
        candidates,
        trace_id=trace_id,
        budget=budget,
        max_display=knowledge.config.max_lesson_display_chars,
    )
    return Injection(trace_id, budget, block, shown, candidates)


def record_injection(
    knowledge: KnowledgeStore,
    injection: Injection,
    context: QueryContext,
    *,
    session_id: str | None = None,
) -> Injection:
    """Record what :func:`prepare` built: the skip, the empty retrieval, or the trace's receipt,
    ``shown_count`` + 1 per shown entry and the retrieval event (the injection as recorded)."""
    store = knowledge.swarm
    trace_id, budget, shown = injection.trace_id, injection.budget, injection.shown
    if injection.skipped:
        log_event(
            store,
            "injection_skip",
            reason="low_headroom",
            agent=context.agent,
            session_id=session_id,
            phase=context.phase,
        )
        return injection
    if not shown:
        log_event(
            store,
            "no_relevant",
            trace_id=trace_id,
            session_id=session_id,
            phase=context.phase,
            agent=context.agent,
            reason="empty auto-injection retrieval",
        )
        return Injection(trace_id, budget, None, [], injection.candidates)
    ledger(knowledge).commit_retrieval(
        {
            "trace_id": trace_id,
            "session_id": session_id,
            "phase": context.phase,
            "agent": context.agent,
            "entry_ids": [r.entry.id for r in shown],
            "tiers": {r.entry.id: r.tier for r in shown},
        }
    )
    for tier in (Tier.SWARM, Tier.HIVE):
        ids = [r.entry.id for r in shown if r.tier == tier]
        if ids:
            record_shown(knowledge.tier(tier.value), ids)
    log_event(
        store,
        "retrieved",
        trace_id=trace_id,
        session_id=session_id,
        phase=context.phase,
        agent=context.agent,
        query=context.haystack()[:QUERY_EVENT_CHARS],
        retrieval_mode=context.mode.value,
        result_ids=[r.entry.id for r in shown],
        ranks={r.entry.id: i + 1 for i, r in enumerate(shown)},
        scores={r.entry.id: round(r.score, 6) for r in shown},
    )
    return injection


def record_shown(store: TierStore, entry_ids: list[str]) -> list[Entry]:
    """``shown_count`` + 1 for each entry (nothing else: showing confirms nothing)."""
    with store.transaction() as txn:
        out = []
        for entry_id in entry_ids:
            entry = txn.get(entry_id)
            if entry is None:
                continue
            outcomes = normalize_outcomes(entry.outcomes)
            outcomes["shown_count"] = int(outcomes.get("shown_count", 0)) + 1
            out.append(txn.put({**entry.data, "retrieval_outcomes": outcomes}))
        return out


def deliver(
    knowledge: KnowledgeStore,
    found: list[Ranked],
    *,
    trace_id: str,
    budget: Budget,
    context: Callable[[], QueryContext],
    record: bool,
    session_id: str | None = None,
) -> Injection:
    """The block for entries another retrieval already chose and ranked (session-start facts,
    failure recall): those under ``inject_min_confidence`` are dropped; silent, and nothing
    written, when none is left. ``context`` is built only when something is recorded, so a
    silent answer on the hook path costs no phase lookup."""
    config = knowledge.config
    found = [r for r in found if r.entry.confidence >= config.inject_min_confidence]
    if not found:
        return Injection(trace_id, budget, None, [], [])
    block, shown = render_directives(
        found, trace_id=trace_id, budget=budget, max_display=config.max_lesson_display_chars
    )
    injection = Injection(trace_id, budget, block, shown, found)
    if not record or not shown:
        return injection
    return record_injection(knowledge, injection, context(), session_id=session_id)
