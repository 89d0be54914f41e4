"""The stores one workspace has, and how each answers a question through its own search.

Each ``ask_*`` function calls the store's public search and turns its answer into
:class:`~swarmq.federated.finding.Finding` values in the store's own order; none ranks
anything itself. A store the workspace does not have (no ``.agents/``, no memory roots) is
``None`` and answers nothing.

The knowledge store applies its own relevance floor (``inject_min_relevance`` /
``dense_min_similarity``); so does ``lookup`` (``min_relevance``, the share of the query's
content words an artifact holds). Memory search has none (any shared token matches), so the
same share ``lookup`` uses is measured on the memory line and held to a floor here: without
it a note sharing only "the" and "app" with a task would break the silence of injection.

Given a query's :class:`~swarmq.federated.meaning.Meaning` (hybrid retrieval: the knowledge
store's model), the flywheel and memory answers are meaning-aware too: a record is relevant when
it holds the floor's share of the query's words or its cosine (a learning's or pattern's whole
text, or its title alone) reaches its store kind's dense floor, and they rank by both (``swarmq.flywheel.lookup.fused_relevance``); memory notes near the
query in meaning are candidates beside the lines memory search finds by their words. Pool
candidates and the mission ledger's own memory files (``swarmq.profiles.layout.ledger_record``)
are reached by their words only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swarmq.federated.finding import Finding, Store
from swarmq.flywheel.citations import artifact_key
from swarmq.flywheel.lookup import Judge, LookupHit, fused_relevance, words
from swarmq.flywheel.lookup import search as lookup_search
from swarmq.flywheel.lookup import select as lookup_select
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked
from swarmq.knowledge.query import search as knowledge_search
from swarmq.knowledge.secrets import redacted
from swarmq.profiles.layout import ledger_record
from swarmq.profiles.search import MAX_QUERY_CHARS, MemorySearch, Scope, SearchError

if TYPE_CHECKING:
    from swarmq.federated.meaning import DenseFloors, Meaning
    from swarmq.flywheel.relevance import LearnedRelevance
    from swarmq.knowledge.missing import MissingPath


@dataclass(frozen=True, slots=True)
class Floors:
    """The least relevance (share of the query's content words) a flywheel artifact or a
    memory note needs to be an answer; the knowledge store keeps its own floors."""

    flywheel: float = 0.34
    """``lookup``'s own default."""
    memory: float = 0.34
    dense: DenseFloors | None = None
    """The cosines that make a learning, pattern, candidate or memory note relevant under
    hybrid retrieval; ``None``: the model's calibrated floors
    (``swarmq.federated.meaning.DENSE_FLOORS``)."""
    learned: bool = False
    """Under hybrid retrieval, admit and rank learnings and patterns by the relevance learned
    for the meaning's model (``swarmq.federated.meaning.LEARNED``) instead of the share and
    cosine floors; the floors still hold where the model has none. Injection's choice: it was
    fitted on what injection must show and keep silent."""


@dataclass(frozen=True, slots=True)
class Stores:
    """Every store of one workspace (``None``: the workspace has none of that kind)."""

    workspace: Path
    """The project root the artifact paths in ``source_refs`` and citations are relative to."""
    knowledge: KnowledgeStore | None = None
    agents: AgentsLayout | None = None
    memory: MemorySearch | None = None
    worker_id: str | None = None
    """Whose memory to search beside the shared one (``None``: every worker's)."""


_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]+")
MAX_ID = 128


def finding_id(prefix: str, ident: str) -> str:
    """The artifact's own id when an acknowledgement marker can quote it (so ``lookup``
    still prints the id ``swarmq pool show`` takes), else ``prefix:`` and a digest."""
    if ident and len(ident) <= MAX_ID and not _ID_UNSAFE.search(ident):
        return ident
    return f"{prefix}:{hashlib.sha1(ident.encode('utf-8')).hexdigest()[:16]}"


def ask_knowledge(stores: Stores, context: QueryContext, limit: int) -> list[Finding]:
    """Swarm and hive entries, as ``knowledge.query.search`` ranks them (one list: the store
    already ranks both tiers on one score and drops hive copies of swarm entries)."""
    knowledge = stores.knowledge
    if knowledge is None or limit <= 0:
        return []
    return knowledge_findings(stores, knowledge_search(knowledge, context, limit=limit))


def knowledge_findings(stores: Stores, answer: Sequence[Ranked]) -> list[Finding]:
    """A knowledge store's answer (search, recall, session start), in its order, as findings
    linked to the flywheel artifacts their ``source_refs`` name."""
    out = []
    for rank, ranked in enumerate(answer, 1):
        entry = ranked.entry
        parts = ranked.breakdown
        matched = any(k in parts for k in ("trigger", "tool", "agent"))
        relevance = 1.0 if matched else max(parts.get("relevance", 0.0), parts.get("cosine", 0.0))
        out.append(
            Finding(
                Store.HIVE if ranked.tier == Store.HIVE else Store.SWARM,
                entry.id,
                redacted(entry.lesson),
                rank,
                min(1.0, max(0.0, relevance)),
                ranked.tier,
                frozenset(artifact_key(stores.workspace, r) for r in entry.strings("source_refs")),
                ranked.forced,
                ranked=ranked,
            )
        )
    return out


_FLYWHEEL_STORE = {"learning": Store.LEARNING, "pattern": Store.PATTERN}


def ask_flywheel(
    stores: Stores,
    text: str,
    limit: int,
    floor: float,
    *,
    include_pool: bool = True,
    meaning: Meaning | None = None,
    learned: LearnedRelevance | None = None,
) -> list[Finding]:
    """Learnings, patterns and pool candidates, as ``lookup`` ranks them (nothing cited); with
    ``meaning``, by word share and cosine both (with ``learned``: by that relevance of them),
    a non-Latin task's cosine counting only beside a shared term when the knowledge store's
    ``non_latin_needs_term`` says so (the meaning's model is the knowledge store's, or the
    packaged WordLlama)."""
    layout = stores.agents
    if layout is None or limit <= 0 or not layout.root.is_dir():
        return []
    hits = lookup_search(
        layout,
        text,
        limit=limit,
        min_relevance=floor,
        include_pool=include_pool,
        cosines=meaning.cosines if meaning is not None else None,
        min_cosine=meaning.floors.flywheel if meaning is not None else 1.0,
        min_title_cosine=meaning.floors.title if meaning is not None else None,
        learned=learned if meaning is not None else None,
        non_latin_needs_term=stores.knowledge is not None
        and stores.knowledge.config.non_latin_needs_term,
    )
    return flywheel_findings(stores, hits)


def judge_flywheel(
    stores: Stores, judge: Judge, limit: int, *, include_pool: bool = True
) -> list[Finding]:
    """Learnings, patterns and pool candidates ``judge`` keeps (a question that is not words:
    a failure signature, a project fact), ranked as ``lookup`` ranks."""
    layout = stores.agents
    if layout is None or limit <= 0 or not layout.root.is_dir():
        return []
    return flywheel_findings(
        stores, lookup_select(layout, judge, limit=limit, include_pool=include_pool)
    )


def flywheel_findings(stores: Stores, hits: Sequence[LookupHit]) -> list[Finding]:
    out = []
    for rank, hit in enumerate(hits, 1):
        store = _FLYWHEEL_STORE.get(hit.kind, Store.CANDIDATE)
        out.append(
            Finding(
                store,
                finding_id(store.value, hit.id),
                hit.text or hit.snippet,
                rank,
                hit.relevance,
                hit.cite_as,
                frozenset({artifact_key(stores.workspace, hit.path)}),
                hit=hit,
            )
        )
    return out


def ask_probes(
    stores: Stores, missing: Sequence[MissingPath], limit: int, *, session_id: str | None
) -> list[Finding]:
    """What other sessions of this workspace learned about the paths a failing probe just
    missed (:mod:`swarmq.flywheel.probes`): only at such a failure, never for words."""
    # Here, not at the top: the observations' reader brings failure signatures, which a
    # search or an injection never needs (tests/cli/test_read_imports_cli.py).
    from swarmq.flywheel.probes import recalled

    layout = stores.agents
    if layout is None or limit <= 0 or not missing:
        return []
    out = []
    for rank, seen in enumerate(recalled(layout, missing, session_id=session_id, limit=limit), 1):
        out.append(
            Finding(
                Store.OBSERVATION,
                seen.id,
                redacted(seen.statement()),
                rank,
                1.0,
                seen.source or str(layout.probes),
            )
        )
    return out


_NOTE_KEYS = ("lesson", "summary", "text", "content", "message", "title", "objective", "reason")


def note_text(line: str) -> str:
    """A memory line as a reader wants it: a JSONL record's main text, else the line."""
    stripped = line.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            return stripped
        if isinstance(value, dict):
            for key in _NOTE_KEYS:
                found = value.get(key)
                if isinstance(found, str) and found.strip():
                    return " ".join(found.split())
    return stripped


def _line(path: str, number: int) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for index, line in enumerate(handle, 1):
                if index == number:
                    return line
    except OSError:
        return None
    return None


def ask_memory(
    stores: Stores,
    text: str,
    limit: int,
    floor: float,
    *,
    judge: Callable[[str], float | None] | None = None,
    scan: int | None = None,
    meaning: Meaning | None = None,
) -> list[Finding]:
    """Worker and shared memory lines, as memory search ranks them (phrase, overlap,
    recency), each read whole from its file and kept when it holds ``floor`` of the query's
    content words, or, given a ``judge`` (note text -> relevance, or None: not an answer),
    when the judge keeps it among the first ``scan`` lines the search found. With ``meaning``
    (and no judge), notes near the query in meaning are found too, and all rank by word share
    and cosine both."""
    memory = stores.memory
    wanted = words(text)
    if memory is None or limit <= 0 or not wanted:
        return []
    scope = Scope.ALL
    try:
        result = memory.search(
            text[:MAX_QUERY_CHARS],
            scope=scope,
            worker_id=stores.worker_id,
            limit=min(scan if scan is not None else limit * 2, 200),
            budget_chars=1 << 30,
        )
    except SearchError:
        return []
    if meaning is not None and judge is None:
        prefixes = memory.prefixes(scope, stores.worker_id)
        found = [(hit.path, hit.line) for hit in result.hits]
        return _memory_by_meaning(stores, wanted, found, prefixes, limit, floor, meaning)
    out: list[Finding] = []
    for hit in result.hits:
        raw = _line(hit.path, hit.line)
        if raw is None:
            continue
        body = note_text(raw)
        if judge is not None:
            judged = judge(body)
            if judged is None:
                continue
            relevance = judged
        else:
            relevance = len(wanted & words(body)) / len(wanted)
            if relevance < floor:
                continue
        out.append(_note(stores, hit.path, hit.line, body, len(out) + 1, relevance))
        if len(out) >= limit:
            break
    return out


def _note(stores: Stores, path: str, line: int, body: str, rank: int, relevance: float) -> Finding:
    assert stores.memory is not None
    where = f"{path}:{line}"
    shared = str(stores.memory.shared_dir) + os.sep
    store = (
        Store.SHARED_MEMORY if os.path.realpath(path).startswith(shared) else Store.WORKER_MEMORY
    )
    return Finding(
        store,
        f"memory:{hashlib.sha1(where.encode('utf-8')).hexdigest()[:12]}",
        redacted(body),
        rank,
        relevance,
        where,
    )


def _memory_by_meaning(
    stores: Stores,
    wanted: set[str],
    found: Sequence[tuple[str, int]],
    prefixes: Sequence[str],
    limit: int,
    floor: float,
    meaning: Meaning,
) -> list[Finding]:
    """The lines memory search ``found`` by their words (``(path, line)``, its order) and the
    notes nearest the query in meaning, each relevant by word share or cosine, best
    (:func:`fused_relevance`) first; ties keep memory search's order (phrase, overlap,
    recency), then the nearer note.

    The mission ledger's own records (summaries, event logs, handoffs, episodes:
    ``ledger_record``) are not reached by meaning: they echo every mission's objective and
    checkpoints, which a later task on the same subject is near without their being lessons
    (the demo's fourth mission was shown its predecessor's objective twice and a checkpoint).
    A line of theirs that holds the floor's share of the query's words is still an answer,
    measured on its words alone."""
    memory = stores.memory
    assert memory is not None
    profiles, shared = memory.profiles_dir, memory.shared_dir
    near = meaning.near_notes(
        [str(profiles), str(shared)],
        prefixes,
        note_text,
        lambda path: not ledger_record(path, profiles, shared),
        2 * limit,
    )
    order: dict[tuple[str, int], int] = {}
    for key in [*found, *near.nearest]:
        order.setdefault(key, len(order))
    scored: list[tuple[float, int, str, int, str]] = []
    for (path, line), position in order.items():
        measured = near.note(path, line)
        if measured is not None:
            body, cosine = measured
        else:  # a line too short for a vector (or new since): its words alone
            raw = _line(path, line)
            if raw is None:
                continue
            body, cosine = note_text(raw), 0.0
        share = len(wanted & words(body)) / len(wanted)
        if share < floor and cosine < meaning.floors.memory:
            continue
        scored.append((fused_relevance(share, cosine), position, path, line, body))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [
        _note(stores, path, line, body, rank, relevance)
        for rank, (relevance, _, path, line, body) in enumerate(scored[:limit], 1)
    ]
