"""Project facts at session start: what holds for every session of a project, whatever the task.

An environment fact ("`python` is not on PATH here; use python3", "sudo needs a real terminal",
"a change is live only after `pm2 restart`"), a layout fact or a standing preference of the
user matters before the agent has said a word, so it cannot wait for a task's words to match
it. Such an entry carries the tag ``project-fact`` (set when the lesson is added, from its text
or by the adder; see :mod:`._factrule`) in a valid opencode-swarm category (``tooling`` for the
environment, ``architecture`` for layout, ``process`` for preferences) with ``scope: global``,
so opencode-swarm reads it as an ordinary lesson.

:func:`session_start` shows the project's facts and its critical directives within
``knowledge.session_start_budget_chars``, and is recorded like any injection. The hive is shared
by every project on the machine, so a hive entry is a fact of *this* project only when it is
tagged ``project-fact`` and came from this project (``source_project``): another project's
facts stay silent here.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from swarmq.knowledge._factrule import FACT_TAG, fact_kind
from swarmq.knowledge._recallkeys import SESSION_START_KEY, entry_signature
from swarmq.knowledge._recallpath import signature_dir, swarm_duplicates
from swarmq.knowledge._sigindex import file_matches
from swarmq.knowledge.inject import Injection, deliver
from swarmq.knowledge.model import Entry, RetrievalMode
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked
from swarmq.knowledge.ranking import static_breakdown
from swarmq.knowledge.render import Budget
from swarmq.knowledge.store import TierStore

CRITICAL_BONUS = 1.0
FACT_BONUS = 0.5
CURELESS_TAG = "failure"
"""The type tag of a lesson that names a failure and no cure (forge found no call that worked
after it; the flywheel bridge tags an entry with its candidate's type, ``solution`` when it
found one)."""


def is_project_fact(entry: Entry) -> bool:
    return FACT_TAG in entry.tags


def _entries(store: TierStore, index_dir: Path | None) -> list[Entry]:
    if index_dir is None:
        return store.list(active_only=True)
    return [
        entry for _, entry in file_matches(store.files.knowledge, [SESSION_START_KEY], index_dir)
    ]


def _candidates(
    knowledge: KnowledgeStore, store: TierStore, hive: bool, index_dir: Path | None
) -> list[Ranked]:
    scopes = set(knowledge.config.scope_filter)
    out = []
    for entry in _entries(store, index_dir):
        if not entry.is_active or entry.scope not in scopes:
            continue
        fact = is_project_fact(entry)
        if hive and entry.source_project != knowledge.project_name:
            continue  # another project's fact or directive: silent here
        critical = entry.priority == "critical"
        if not fact and not critical:
            continue
        breakdown = static_breakdown(entry)
        breakdown["fact"] = FACT_BONUS if fact else 0.0
        breakdown["critical"] = CRITICAL_BONUS if critical else 0.0
        score = sum(breakdown.values())
        breakdown["final"] = score
        out.append(Ranked(entry, str(store.tier), score, breakdown, forced=critical))
    return out


def session_start(
    knowledge: KnowledgeStore,
    *,
    agent: str | None = None,
    session_id: str | None = None,
    record: bool = True,
    index_dir: Path | None = None,
) -> Injection:
    """The project's facts (environment, layout, standing preferences) and critical
    directives, within the configured session-start budget, independent of any task text;
    silent in a project that has none.

    A store this process has not loaded is read through the persisted index that recall
    keeps (``index_dir``, else the store's ``recall_dir``) instead of being loaded whole."""
    config = knowledge.config
    budget = start_budget(knowledge)
    trace_id = str(uuid.uuid4())
    if not config.enabled or budget.max_entries <= 0 or budget.max_chars <= 0:
        return Injection(trace_id, budget, None, skipped=True)
    return deliver(
        knowledge,
        start_entries(knowledge, index_dir),
        trace_id=trace_id,
        budget=budget,
        context=lambda: start_context(knowledge, agent),
        record=record,
        session_id=session_id,
    )


def start_budget(knowledge: KnowledgeStore) -> Budget:
    config = knowledge.config
    return Budget("full", config.session_start_max_entries, config.session_start_budget_chars)


def start_context(knowledge: KnowledgeStore, agent: str | None) -> QueryContext:
    """What a session start's retrieval event records as its query."""
    return QueryContext(
        text="session start",
        agent=agent,
        phase=knowledge.current_phase(),
        mode=RetrievalMode.SESSION_START,
    )


def states_fact(text: str) -> bool:
    """Whether ``text`` states a project fact by the rule that tags an added lesson (for a
    store that has no tags: a learning, a memory note)."""
    return fact_kind(text) is not None


def start_entries(knowledge: KnowledgeStore, index_dir: Path | None = None) -> list[Ranked]:
    """The project's facts and critical directives, swarm and hive (a hive copy of a swarm
    one dropped), critical first; nothing recorded."""
    config = knowledge.config
    swarm_dir = signature_dir(knowledge, knowledge.swarm, index_dir)
    found = _candidates(knowledge, knowledge.swarm, False, swarm_dir)
    if config.hive_enabled:
        hive_dir = signature_dir(knowledge, knowledge.hive, index_dir)
        hive = _candidates(knowledge, knowledge.hive, True, hive_dir)
        if hive:
            local = [r.entry.lesson for r in found]
            with swarm_duplicates(knowledge, swarm_dir is not None, local) as duplicate:
                found += [r for r in hive if not duplicate(r.entry.lesson)]
    found.sort(key=lambda r: (not r.forced, -r.score))
    return one_per_signature(found)


def one_per_signature(found: list[Ranked]) -> list[Ranked]:
    """``found`` (best first) with each failure signature's best entry ahead of every second
    entry of a signature already there, and within a signature a lesson with a cure ahead of one
    that only names the failure (:data:`CURELESS_TAG`); forced directives stay first.

    The block holds three or four records, and more facts qualify in a project that has
    worked a while: three lessons of one missing program (each session that met it forged its
    own) would fill the block with one fact and push out every other (docs/QUALITY.md, "Issue
    24: what the session-start block keeps when more qualifies than fits"). The repeats are
    kept behind, not dropped: they fill what room the distinct facts leave."""
    signatures = [entry_signature(r.entry) for r in found]
    cured = {
        sig
        for r, sig in zip(found, signatures, strict=True)
        if sig is not None and CURELESS_TAG not in r.entry.tags
    }
    first: list[Ranked] = []
    later: list[Ranked] = []
    seen: set[str] = set()
    for ranked, signature in zip(found, signatures, strict=True):
        if ranked.forced or signature is None:
            first.append(ranked)
            continue
        if signature in seen or (signature in cured and CURELESS_TAG in ranked.entry.tags):
            later.append(ranked)
            continue
        seen.add(signature)
        first.append(ranked)
    return first + later
