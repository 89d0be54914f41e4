"""Injection from every store: the budgeted ``<swarm_knowledge_directives>`` block over the
fused answer, recorded before it is returned.

A knowledge entry keeps its record as the knowledge store renders it (its id is what
``KNOWLEDGE_APPLIED:<trace>:<id>`` names); a learning, pattern, pool candidate or memory note
is a record of its own (``id: learning:…``, its source, its whole text). The trace's receipt
lists every id shown, so any of them can be acknowledged; only knowledge entries have
``shown_count``. The flywheel artifacts behind what was shown (shown directly, or behind a
bridged entry) get one ``retrieved`` citation each: exposure, which moves σ and confirms
nothing (``swarmq.flywheel.confirm``). Records are whole: one that does not fit the character
budget is left out and the next that fits is taken; only a record too long for any block is
cut, to the room the records after it leave (:func:`render`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from swarmq.federated.finding import Finding, Fused, Store
from swarmq.federated.search import ask, injection_floors
from swarmq.federated.stores import Floors, Stores
from swarmq.flywheel.citations import CitationType, citation_event, record_citations
from swarmq.flywheel.confirm import INJECTED, flywheel_refs
from swarmq.knowledge.inject import (
    QUERY_EVENT_CHARS,
    Injection,
    ledger,
    log_event,
    record_injection,
    record_shown,
)
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.knowledge.render import (
    ACK_HINT,
    CLOSE_TAG,
    MIN_CLIPPED_DISPLAY,
    OPEN_TAG,
    Budget,
    budget_for,
    clip,
    clipped_to_fit,
    directive_record,
    lines_size,
    sanitize,
)
from swarmq.knowledge.validation import check_hostile


@dataclass(frozen=True, slots=True)
class FederatedInjection:
    trace_id: str
    budget: Budget
    block: str | None
    """The directives block, or ``None`` when nothing is injected."""
    shown: list[Fused] = field(default_factory=list)
    candidates: list[Fused] = field(default_factory=list)
    skipped: bool = False
    """Nothing was searched (no headroom, or knowledge disabled)."""

    @property
    def shown_ids(self) -> list[str]:
        return [f.finding.id for f in self.shown]

    def as_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "regime": self.budget.regime,
            "max_entries": self.budget.max_entries,
            "max_chars": self.budget.max_chars,
            "block": self.block,
            "shown": [f.as_dict() for f in self.shown],
        }


_SOURCE_LABEL = {
    Store.LEARNING: "learning",
    Store.PATTERN: "pattern",
    Store.CANDIDATE: "pool candidate (not yet promoted)",
    Store.WORKER_MEMORY: "worker memory",
    Store.SHARED_MEMORY: "shared memory",
    Store.OBSERVATION: "observation of an earlier session",
}


def _shown_safely(finding: Finding) -> bool:
    texts = [finding.text]
    if finding.ranked is not None:
        entry = finding.ranked.entry
        for key in ("triggers", "required_actions", "forbidden_actions", "verification_checks"):
            texts.extend(entry.strings(key))
    return all(check_hostile(text).valid for text in texts)


@lru_cache(maxsize=2048)
def _sanitized(text: str) -> str:
    """:func:`sanitize` kept per text: cutting a long record to fit builds it a dozen times
    (:func:`clipped_to_fit`), and the secret scan of its whole text was most of the block's
    cost."""
    return sanitize(text)


def record_lines(fused: Fused, max_display: int, *, with_also: bool = True) -> list[str]:
    """One record of the block: a knowledge entry as the store renders it, anything else with
    its source; both name the other stores that hold the same fact (unless ``with_also`` is
    false: a record that fits the budget only without that line)."""
    finding = fused.finding
    if finding.ranked is not None:
        lines = directive_record(finding.ranked, max_display)
    else:
        lines = [
            f"- id: {finding.id}",
            f"  source: {sanitize(_SOURCE_LABEL.get(finding.store, finding.store.value))} "
            f"{sanitize(finding.location)}",
            f"  lesson: {clip(_sanitized(finding.text), max_display)}",
        ]
    if fused.also and with_also:
        lines.append(
            "  also_in: " + sanitize(", ".join(f"{f.store.value} {f.location}" for f in fused.also))
        )
    return lines


def render(
    fused: list[Fused], *, trace_id: str, budget: Budget, max_display: int
) -> tuple[str | None, list[Fused]]:
    """The block and what it shows (``None`` when nothing fits). The records are chosen by
    their lessons alone; then each shown record names the other stores holding its fact
    (``also_in``) while the budget has room: a pointer never pushes a lesson out.

    Records are shown whole, except one too long for any block on its own, which is cut
    (:func:`clipped_to_fit`), else it could never be shown however relevant. Such a record is
    chosen at the cost of its shortest useful cut, and only the room the records after it
    leave is then given back to it, first-ranked first: cut to the whole room, a long learning
    ranked first would push out every record after it, and the first record is not always
    the relevant one (docs/QUALITY.md, "Issue 26: budget-aware rendering of long records").
    Its start, id and source still tell the agent where to read the rest."""
    header = [OPEN_TAG, f"trace_id: {trace_id}", ACK_HINT]
    size = empty = lines_size(header) + len(CLOSE_TAG)
    records: list[list[str]] = []
    shown: list[Fused] = []
    cut_ones: list[int] = []
    for item in fused:
        if len(shown) >= budget.max_entries:
            break
        if not _shown_safely(item.finding):
            continue
        lines = record_lines(item, max_display, with_also=False)
        cost = lines_size(lines)
        if size + cost > budget.max_chars:
            if empty + cost <= budget.max_chars:
                continue  # whole records only: a shorter one further down may still fit
            least = clipped_to_fit(
                partial(record_lines, item, with_also=False),
                budget.max_chars - size,
                MIN_CLIPPED_DISPLAY,
            )
            if least is None:
                continue  # too long for any block, and too little room left to show its start
            cut_ones.append(len(records))
            lines, cost = least, lines_size(least)
        records.append(lines)
        shown.append(item)
        size += cost
    if not shown:
        return None, []
    for index in cut_ones:  # the room the others left, to the cut records, best first
        now = lines_size(records[index])
        make = partial(record_lines, shown[index], with_also=False)
        grown = clipped_to_fit(make, budget.max_chars - size + now, max_display)
        if grown is not None:
            size += lines_size(grown) - now
            records[index] = grown
    for index, item in enumerate(shown):
        if not item.also:
            continue
        full = record_lines(item, max_display)
        extra = lines_size(full) - lines_size(records[index])
        if size + extra <= budget.max_chars:
            records[index] = full
            size += extra
    return "\n".join([*header, *(line for rec in records for line in rec), CLOSE_TAG]), shown


def prepare(
    stores: Stores,
    context: QueryContext,
    *,
    headroom: float = 1.0,
    floors: Floors | None = None,
) -> FederatedInjection:
    """The block alone: every store read, nothing written (``floors``: injection's own unless
    a calibration tries others)."""
    knowledge = _knowledge(stores)
    config = knowledge.config
    trace_id = str(uuid.uuid4())
    budget = budget_for(headroom, config, context.mode)
    if budget.regime == "skipped" or not config.enabled:
        return FederatedInjection(trace_id, budget, None, skipped=True)
    chosen = floors if floors is not None else injection_floors(config)
    candidates = ask(stores, context, limit=budget.max_entries, floors=chosen)
    block, shown = render(
        candidates,
        trace_id=trace_id,
        budget=budget,
        max_display=config.max_lesson_display_chars,
    )
    return FederatedInjection(trace_id, budget, block, shown, candidates)


def _knowledge(stores: Stores) -> KnowledgeStore:
    if stores.knowledge is None:
        raise ValueError("injection records into the knowledge store: the workspace has none")
    return stores.knowledge


def record(
    stores: Stores,
    injection: FederatedInjection,
    context: QueryContext,
    *,
    session_id: str | None = None,
) -> FederatedInjection:
    """Record what :func:`prepare` built: the skip or the empty retrieval as the knowledge
    store records them, else the trace's receipt (every id shown), ``shown_count`` + 1 per
    knowledge entry, the retrieval event and the flywheel's exposure citations."""
    knowledge = _knowledge(stores)
    if injection.skipped or not injection.shown:
        record_injection(
            knowledge,
            Injection(injection.trace_id, injection.budget, None, skipped=injection.skipped),
            context,
            session_id=session_id,
        )
        return FederatedInjection(
            injection.trace_id,
            injection.budget,
            None,
            [],
            injection.candidates,
            injection.skipped,
        )
    shown = injection.shown
    entries = [f.finding for f in shown if f.finding.ranked is not None]
    others = {f.finding.id: f.finding.location for f in shown if f.finding.ranked is None}
    ledger(knowledge).commit_retrieval(
        {
            "trace_id": injection.trace_id,
            "session_id": session_id,
            "phase": context.phase,
            "agent": context.agent,
            "entry_ids": injection.shown_ids,
            "tiers": {f.id: f.store.value for f in entries},
            **({"sources": others} if others else {}),
        }
    )
    for tier in (Tier.SWARM, Tier.HIVE):
        ids = [f.id for f in entries if f.store.value == tier.value]
        if ids:
            record_shown(knowledge.tier(tier.value), ids)
    log_event(
        knowledge.swarm,
        "retrieved",
        trace_id=injection.trace_id,
        session_id=session_id,
        phase=context.phase,
        agent=context.agent,
        query=context.haystack()[:QUERY_EVENT_CHARS],
        retrieval_mode=context.mode.value,
        result_ids=injection.shown_ids,
        ranks={fid: i + 1 for i, fid in enumerate(injection.shown_ids)},
        scores={f.finding.id: round(f.score, 6) for f in shown},
    )
    cite_flywheel(
        stores,
        shown,
        session_id or f"trace-{injection.trace_id}",
        CitationType.RETRIEVED,
        provenance=INJECTED,
    )
    return injection


def flywheel_artifacts(stores: Stores, fused: Fused) -> list[str]:
    """The flywheel artifacts (repo-relative, as citations name them) one fact stands on: the
    learnings and candidates found, and those a bridged knowledge entry came from."""
    layout = stores.agents
    out: list[str] = []
    for finding in fused.members:
        if finding.hit is not None:
            out.append(finding.hit.cite_as)
        elif finding.ranked is not None and layout is not None:
            out.extend(flywheel_refs(layout, finding.ranked.entry.strings("source_refs")))
    return list(dict.fromkeys(out))


def cite_flywheel(
    stores: Stores,
    fused: list[Fused],
    session_id: str,
    citation_type: str,
    *,
    query: str | None = None,
    provenance: str | None = None,
    agent_id: str | None = None,
) -> int:
    """One citation per flywheel artifact behind ``fused``, dated by the knowledge store's
    clock (a replay's own clock, else now); returns how many were written."""
    layout = stores.agents
    knowledge = stores.knowledge
    if layout is None or knowledge is None or not layout.root.is_dir():
        return 0
    when = knowledge.swarm.clock()
    events = [
        citation_event(
            ref,
            session_id,
            citation_type,
            query=query if query is not None else item.finding.id,
            cited_by_agent_id=agent_id,
            match_provenance=provenance,
            when=when,
        )
        for item in fused
        for ref in flywheel_artifacts(stores, item)
    ]
    if not events:
        return 0
    return record_citations(layout, knowledge.locks, events)


def inject(
    stores: Stores,
    context: QueryContext,
    *,
    headroom: float = 1.0,
    session_id: str | None = None,
    record_it: bool = True,
) -> FederatedInjection:
    """Build the block for ``context`` from every store; with ``record_it`` (the default) what
    it shows is recorded before it is returned."""
    injection = prepare(stores, context, headroom=headroom)
    if not record_it:
        return injection
    return record(stores, injection, context, session_id=session_id)
