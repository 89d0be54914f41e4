"""Recall from every store at a failing tool call and at the start of a session.

Neither moment has a task's words to rank by, so no store may answer by word overlap (a failing
``npm test`` shares "test" and "error" with half of any store): each answers only by the rule
the knowledge store already applies, and is then fused and de-duplicated as every other entry
point is (:func:`swarmq.federated.fuse.fuse`: a lesson bridged into ``.swarm/`` and the
learning or pool candidate it came from are one result).

**At a failing call** an answer must carry the call's failure signature (one of
``failure_signatures(text)``, the exact match recall has always required):

- knowledge entries: their ``failure_signature`` field, else the signature of their lesson
  (``swarmq.knowledge.recall.matches``, unchanged);
- learnings and patterns: the signature of their body; pool candidates: the signature recorded
  at ingest (``metadata.failure_signature``; ``""`` means none), else their body's;
- worker and shared memory notes: the signature of the note, among the lines memory search
  finds for the signatures' words (:data:`MEMORY_SCAN` of them);
- probe observations (``swarmq.flywheel.probes``: a missing path another session of this
  project looked for and then found or showed absent): the failing call must be a probe of
  the same missing path (``swarmq.knowledge.missing``); they are answered nowhere else.

**At session start** an answer must state a project fact (the rule that tags an added lesson:
``swarmq.knowledge.facts.states_fact``) or be a critical directive:

- knowledge entries: tagged ``project-fact`` or critical (``facts.start_entries``, unchanged);
- learnings and patterns whose body states a project fact;
- not pool candidates (unconfirmed: the bridge already publishes the confident ones to
  ``.swarm/``, where they are tagged) and not memory notes (a worker's journal, read at every
  session start it would be a scan of every line, and its "always run …" lines are a mission's
  steps, not the project's facts).

No other store can flood the answer or push a knowledge entry out of it: each gives at most the
answer's size before fusion; the facts the knowledge store found lead, in its own order (every
answer matched one exact rule, so there is no relevance for rank fusion to weigh), each with the
copies other stores hold beside it; the other stores' facts fill what the knowledge store's own
budget leaves (recall's ``limit``, the session start's entries and characters). Silence stays
silence: nothing matched, nothing is recorded.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from swarmq.federated.finding import Finding, Fused, Store
from swarmq.federated.fuse import fuse
from swarmq.federated.inject import FederatedInjection, record, render
from swarmq.federated.stores import (
    Stores,
    ask_memory,
    ask_probes,
    judge_flywheel,
    knowledge_findings,
)
from swarmq.knowledge.facts import start_budget, start_context, start_entries, states_fact
from swarmq.knowledge.missing import missing_paths
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked
from swarmq.knowledge.recall import matches, recall_context
from swarmq.knowledge.render import Budget
from swarmq.knowledge.signature import failure_signature, failure_signatures

KNOWLEDGE = (Store.SWARM, Store.HIVE)
MEMORY_SCAN = 50
"""Memory lines read per failing call: memory search ranks them by the signatures' words
(phrase first), and only those whose own signature matches are answers."""


def _confident(knowledge: KnowledgeStore, found: list[Ranked]) -> list[Ranked]:
    """The knowledge store's own rule for a chosen entry: under ``inject_min_confidence`` it
    is not shown (``knowledge.inject.deliver``)."""
    least = knowledge.config.inject_min_confidence
    return [r for r in found if r.entry.confidence >= least]


def _fused(stores: Stores, answers: list[list[Finding]], limit: int) -> list[Fused]:
    knowledge = stores.knowledge
    threshold = knowledge.config.dedup_threshold if knowledge is not None else 0.6
    fused = fuse(answers, dedup_threshold=threshold)
    fused.sort(key=_knowledge_first)
    forced = sum(1 for f in fused if any(m.forced for m in f.members))
    return fused[: max(limit, forced)]


def _knowledge_first(fused: Fused) -> tuple[bool, bool, int]:
    """Every answer matched the same exact rule, so rank fusion has no relevance to weigh: the
    knowledge store's answer (curated, confidence-floored, counted) keeps its order and leads,
    forced directives first; the other stores' facts fill what the budget leaves, in fused
    order (``sort`` is stable)."""
    ranks = [m.rank for m in fused.members if m.store in KNOWLEDGE]
    return (not any(m.forced for m in fused.members), not ranks, min(ranks, default=0))


def _finish(
    stores: Stores,
    fused: list[Fused],
    budget: Budget,
    context: Callable[[], QueryContext],
    *,
    session_id: str | None,
    record_it: bool,
) -> FederatedInjection:
    """Render within ``budget``; record only what is shown (silence records nothing)."""
    knowledge = stores.knowledge
    assert knowledge is not None
    trace_id = str(uuid.uuid4())
    block, shown = render(
        fused,
        trace_id=trace_id,
        budget=budget,
        max_display=knowledge.config.max_lesson_display_chars,
    )
    injection = FederatedInjection(trace_id, budget, block, shown, fused)
    if not shown or not record_it:
        return injection
    return record(stores, injection, context(), session_id=session_id)


_SIGNATURES: dict[str, str | None] = {}
_FACTS: dict[str, bool] = {}
MAX_MEMO = 50_000
"""Texts whose signature or fact verdict a process keeps (dropped whole past it): a learning,
candidate or note is judged again at every failing call and session start, and the signature
module's own cache is sized for one store's entries, which a 10k store's index alone fills."""


def signature_of(text: str) -> str | None:
    """``failure_signature(text)``, once per text per process."""
    if text not in _SIGNATURES:
        if len(_SIGNATURES) >= MAX_MEMO:
            _SIGNATURES.clear()
        _SIGNATURES[text] = failure_signature(text)
    return _SIGNATURES[text]


def is_fact(text: str) -> bool:
    """``states_fact(text)``, once per text per process."""
    if text not in _FACTS:
        if len(_FACTS) >= MAX_MEMO:
            _FACTS.clear()
        _FACTS[text] = states_fact(text)
    return _FACTS[text]


def _signed(signatures: tuple[str, ...], signature: str | None) -> float | None:
    """A finding's relevance at a failure: 1.0 for the call's first (most telling) signature,
    a little less for a later one; ``None`` when it carries none of them."""
    if not signature or signature not in signatures:
        return None
    return max(0.5, 1.0 - 0.1 * signatures.index(signature))


def recall_failure(
    stores: Stores,
    text: str,
    *,
    limit: int = 3,
    agent: str | None = None,
    session_id: str | None = None,
    record_it: bool = True,
    index_dir: Path | None = None,
) -> FederatedInjection:
    """What every store holds for the failing call and error in ``text`` (silent, and
    nothing recorded, when no store holds its signature). ``index_dir``: the knowledge
    store's persisted signature indexes (a fresh process)."""
    knowledge = stores.knowledge
    if knowledge is None:
        raise ValueError("recall records into the knowledge store: the workspace has none")
    config = knowledge.config
    budget = Budget("full", limit, config.inject_char_budget)
    signatures = failure_signatures(text)
    if not config.enabled or not signatures or limit <= 0:
        return FederatedInjection(str(uuid.uuid4()), budget, None, skipped=not config.enabled)
    missing = missing_paths(text)

    def artifact(body: str, recorded: str | None) -> float | None:
        return _signed(signatures, signature_of(body) if recorded is None else recorded)

    answers = [
        knowledge_findings(
            stores, _confident(knowledge, matches(knowledge, signatures, index_dir))
        ),
        judge_flywheel(stores, artifact, limit),
        ask_memory(
            stores,
            " ".join(signatures),
            limit,
            0.0,
            judge=lambda note: _signed(signatures, signature_of(note)),
            scan=MEMORY_SCAN,
        ),
        ask_probes(stores, missing, limit, session_id=session_id),
    ]
    return _finish(
        stores,
        _fused(stores, answers, limit),
        budget,
        lambda: recall_context(knowledge, signatures, text, agent),
        session_id=session_id,
        record_it=record_it,
    )


def _fact(body: str, recorded: str | None) -> float | None:
    return 1.0 if is_fact(body) else None


def recall_session_start(
    stores: Stores,
    *,
    agent: str | None = None,
    session_id: str | None = None,
    record_it: bool = True,
    index_dir: Path | None = None,
) -> FederatedInjection:
    """The project's facts and critical directives from every store that can state them,
    within the session-start budget (silent, and nothing recorded, in a project with none)."""
    knowledge = stores.knowledge
    if knowledge is None:
        raise ValueError("recall records into the knowledge store: the workspace has none")
    config = knowledge.config
    budget = start_budget(knowledge)
    if not config.enabled or budget.max_entries <= 0 or budget.max_chars <= 0:
        return FederatedInjection(str(uuid.uuid4()), budget, None, skipped=True)
    answers = [
        knowledge_findings(stores, _confident(knowledge, start_entries(knowledge, index_dir))),
        judge_flywheel(stores, _fact, budget.max_entries, include_pool=False),
    ]
    return _finish(
        stores,
        _fused(stores, answers, budget.max_entries),
        budget,
        lambda: start_context(knowledge, agent),
        session_id=session_id,
        record_it=record_it,
    )
