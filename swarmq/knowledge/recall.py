"""Recall at the moment of failure: the lessons whose failure signature matches a failing call.

A lesson born from a failure carries its signature in the entry field ``failure_signature``
(written when the lesson is added, :func:`swarmq.knowledge.reinforcement.new_entry`); entries
written before that, or by opencode-swarm, are matched by the signature computed from their
lesson text. Each store's mirror keeps a signature index (signature → slots) in step with its
changes, so a recall in a running process is a dictionary lookup; a fresh process reads a
persisted index instead (:mod:`._sigindex`). Only the exact signature matches: a looser
same-program same-class fallback was measured on the real failures and not kept
(``docs/knowledge.md``, Recall).

Silence is the normal answer: most failures have no lesson yet, and a hook runs on every failing
tool call, so nothing is shown, recorded or logged when nothing matches. What is shown is
recorded exactly as an injection is (receipt, ``shown_count``, ``retrieved`` event with
``retrieval_mode: failure_recall``), so ``KNOWLEDGE_APPLIED:<trace>:<id>`` closes the loop.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from swarmq.knowledge._recallpath import signature_dir, swarm_duplicates
from swarmq.knowledge._sigindex import file_matches, mirror_matches
from swarmq.knowledge.inject import Injection, deliver
from swarmq.knowledge.model import Entry, RetrievalMode
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked
from swarmq.knowledge.ranking import static_breakdown
from swarmq.knowledge.render import Budget
from swarmq.knowledge.signature import failure_signatures
from swarmq.knowledge.store import TierStore

MATCH_BONUS = 1.0
"""Added to a matching entry's static score (signature rank lowers it a little)."""
QUERY_CHARS = 800


def _ranked(store: TierStore, matches: list[tuple[int, Entry]]) -> list[Ranked]:
    """Active, in-scope matches scored: static score plus the match (a later signature of the
    failure, less telling than its first, ranks a little lower)."""
    scopes = set(store.config.scope_filter)
    out = []
    for rank, entry in matches:
        if not entry.is_active or entry.scope not in scopes:
            continue
        breakdown = static_breakdown(entry)
        breakdown["signature"] = MATCH_BONUS - 0.1 * rank
        score = sum(breakdown.values())
        breakdown["final"] = score
        out.append(Ranked(entry, str(store.tier), score, breakdown))
    return out


def match_tier(
    store: TierStore, signatures: tuple[str, ...], index_dir: Path | None = None
) -> list[Ranked]:
    """Active, in-scope entries of one tier whose signature is one of ``signatures``: from the
    store's mirror, or, with ``index_dir``, from the persisted index kept there (a fresh
    process: no full parse of the store)."""
    if index_dir is None:
        return _ranked(store, mirror_matches(store, signatures))
    return _ranked(store, file_matches(store.files.knowledge, signatures, index_dir))


def recall_error(
    knowledge: KnowledgeStore,
    text: str,
    *,
    limit: int = 3,
    agent: str | None = None,
    session_id: str | None = None,
    record: bool = True,
    index_dir: Path | None = None,
) -> Injection:
    """Lessons whose failure signature matches the failing call and error in `text`
    (silent when none match), hive included.

    A store this process has not loaded is read through its persisted signature index
    (``index_dir``, else the store's ``recall_dir``; :mod:`._recallpath`) instead of being
    loaded whole."""
    config = knowledge.config
    budget = Budget("full", limit, config.inject_char_budget)
    trace_id = str(uuid.uuid4())
    signatures = failure_signatures(text)
    if not config.enabled or not signatures or limit <= 0:
        return Injection(trace_id, budget, None, skipped=not config.enabled)
    found = matches(knowledge, signatures, index_dir)
    return deliver(
        knowledge,
        found,
        trace_id=trace_id,
        budget=budget,
        context=lambda: recall_context(knowledge, signatures, text, agent),
        record=record,
        session_id=session_id,
    )


def recall_context(
    knowledge: KnowledgeStore, signatures: tuple[str, ...], text: str, agent: str | None
) -> QueryContext:
    """What a recall's retrieval event records as its query (the signature, then the call)."""
    return QueryContext(
        text=f"{signatures[0]}\n{text[:QUERY_CHARS]}",
        agent=agent,
        phase=knowledge.current_phase(),
        mode=RetrievalMode.FAILURE_RECALL,
    )


def matches(
    knowledge: KnowledgeStore, signatures: tuple[str, ...], index_dir: Path | None = None
) -> list[Ranked]:
    """Swarm and hive entries whose signature is one of ``signatures``, best first (a hive
    copy of a swarm lesson dropped); nothing recorded. A store this process has not loaded is
    read through its persisted signature index (:func:`._recallpath.signature_dir`)."""
    config = knowledge.config
    swarm_dir = signature_dir(knowledge, knowledge.swarm, index_dir)
    found = match_tier(knowledge.swarm, signatures, swarm_dir)
    if config.hive_enabled:
        hive = match_tier(
            knowledge.hive, signatures, signature_dir(knowledge, knowledge.hive, index_dir)
        )
        if hive:
            local = [r.entry.lesson for r in found]
            with swarm_duplicates(knowledge, swarm_dir is not None, local) as duplicate:
                found += [r for r in hive if not duplicate(r.entry.lesson)]
    found.sort(key=lambda r: -r.score)
    return found
