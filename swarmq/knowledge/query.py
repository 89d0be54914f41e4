"""Action-aware retrieval over the swarm and hive tiers, answering in milliseconds at 10k+.

Each tier's mirror carries a :class:`QueryIndex`: term postings (lesson, triggers, tags, as
normalised terms: identifiers split, stems, stop words out), tool and agent postings, trigger
phrases keyed by their first word, and the entries sorted by their static score. A query scores
only entries that match something in the context, so it never walks the whole store.

Relevance is the share of the query's IDF-weighted terms an entry matches (terms no entry has
count in full: a query about something the store never mentions has little to match). An entry
is injected only when its relevance reaches ``inject_min_relevance`` (or a trigger phrase, or a
confident tool/agent directive, matches); when nothing does, nothing is injected. With the floor
at 0 the best static entries fill the budget, as before. Critical directives whose trigger, tool
or agent matches are forced to the top. Hive entries that near-duplicate an active swarm entry
are dropped (opencode-swarm's merge).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import heapq
import logging
import math
import sqlite3
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from swarmq.knowledge import _heldindex
from swarmq.knowledge._ahead import PendingVector
from swarmq.knowledge._cosines import DenseCosines, Wanted
from swarmq.knowledge._ftsindex import Facts, FileIndex, StaleIndex
from swarmq.knowledge._indexes import mirror_index
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.model import Entry, RetrievalMode
from swarmq.knowledge.ranking import WEIGHTS, static_breakdown
from swarmq.knowledge.store import TierStore
from swarmq.similarity.normalize import cjk_runs, retrieval_terms, script
from swarmq.similarity.script import non_latin

if TYPE_CHECKING:
    from swarmq.knowledge._dense import DenseIndex
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.similarity.embedding import Embedder, Vectors

MAX_QUERY_TOKENS = 64
COMMON_FRACTION = 0.02
"""Tokens found in more than this share of entries (and more than MIN_COMMON) carry little
signal and are not looked up."""
MIN_COMMON = 50
MAX_SCORED_TOKENS = 12
"""Only the most selective query tokens are scored (query-term pruning, as BM25 engines do)."""
log = logging.getLogger(__name__)

DENSE_CANDIDATES = 64
"""Hybrid: the entries nearest the task by cosine that are scored besides the lexical hits."""


@dataclass(frozen=True, slots=True)
class DenseQuery:
    """The task's vector and the model that made it (one embedding per query, all tiers)."""

    embedder: Embedder
    vector: Vectors


@dataclass(frozen=True, slots=True)
class QueryContext:
    """What the agent is about to do; every field is optional."""

    text: str = ""
    """Task description, last user message, plan step: free text."""
    phase: int | None = None
    tool: str | None = None
    action: str | None = None
    agent: str | None = None
    task_id: str | None = None
    file_paths: Sequence[str] = ()
    scopes: Sequence[str] | None = None
    """Scopes to include (default: ``knowledge.scope_filter``)."""
    mode: RetrievalMode = RetrievalMode.PHASE_START

    def haystack(self) -> str:
        parts = [self.text, self.tool or "", self.action or "", self.agent or "", *self.file_paths]
        return " ".join(p for p in parts if p).lower()


@dataclass(frozen=True, slots=True)
class Ranked:
    """One result with how its score was composed."""

    entry: Entry
    tier: str
    score: float
    breakdown: dict[str, float] = field(default_factory=dict)
    forced: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.entry.id,
            "tier": self.tier,
            "score": round(self.score, 6),
            "forced": self.forced,
            "score_breakdown": self.breakdown,
            "lesson": self.entry.lesson,
        }


class QueryIndex:
    """Postings and static order of one mirror, kept current through slot events."""

    def __init__(self) -> None:
        self.tokens: dict[str, set[int]] = {}
        self.tools: dict[str, set[int]] = {}
        self.agents: dict[str, set[int]] = {}
        self.triggers: dict[str, list[tuple[int, str]]] = {}
        self.static: dict[int, float] = {}
        self._order: list[tuple[float, int]] | None = None
        self.entries: dict[int, Entry] = {}
        self.scope_of: dict[int, str] = {}
        self.breakdown: dict[int, dict[str, float]] = {}
        """Static score components per slot (computed once per entry version)."""
        self.confidence: dict[int, float] = {}
        self.priority: dict[int, str] = {}

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    @property
    def order(self) -> list[tuple[float, int]]:
        """``(-static score, slot)`` ascending: the best entries first (built lazily, then
        maintained incrementally)."""
        if self._order is None:
            self._order = sorted((-score, slot) for slot, score in self.static.items())
        return self._order

    def on_add(self, slot: int, entry: Entry) -> None:
        self.entries[slot] = entry
        self.scope_of[slot] = entry.scope
        self.confidence[slot] = entry.confidence
        self.priority[slot] = entry.priority
        for token in _entry_tokens(entry):
            self.tokens.setdefault(token, set()).add(slot)
        for tool in entry.strings("applies_to_tools"):
            self.tools.setdefault(tool, set()).add(slot)
        for agent in entry.strings("applies_to_agents"):
            self.agents.setdefault(agent, set()).add(slot)
        for trigger in entry.strings("triggers"):
            phrase = trigger.lower().strip()
            words = phrase.split()
            if words:
                self.triggers.setdefault(words[0], []).append((slot, phrase))
        parts = self.breakdown[slot] = static_breakdown(entry)
        score = sum(parts.values()) if entry.is_active else -math.inf
        self.static[slot] = score
        if self._order is not None:
            bisect.insort(self._order, (-score, slot))

    def on_remove(self, slot: int, entry: Entry) -> None:
        self.entries.pop(slot, None)
        self.scope_of.pop(slot, None)
        self.breakdown.pop(slot, None)
        self.confidence.pop(slot, None)
        self.priority.pop(slot, None)
        for token in _entry_tokens(entry):
            _discard(self.tokens, token, slot)
        for tool in entry.strings("applies_to_tools"):
            _discard(self.tools, tool, slot)
        for agent in entry.strings("applies_to_agents"):
            _discard(self.agents, agent, slot)
        for trigger in entry.strings("triggers"):
            words = trigger.lower().split()
            if words and words[0] in self.triggers:
                kept = [t for t in self.triggers[words[0]] if t[0] != slot]
                if kept:
                    self.triggers[words[0]] = kept
                else:
                    del self.triggers[words[0]]
        score = self.static.pop(slot, None)
        if score is not None and self._order is not None:
            position = bisect.bisect_left(self._order, (-score, slot))
            if position < len(self._order) and self._order[position] == (-score, slot):
                del self._order[position]

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None:
        self.on_remove(slot, old)
        self.on_add(slot, new)


def _entry_tokens(entry: Entry) -> set[str]:
    text = " ".join([entry.lesson, *entry.strings("triggers"), *entry.tags])
    return set(retrieval_terms(text))


def _unseen(haystack: str, frequency: dict[str, int]) -> int:
    """The query's terms no entry holds that weigh in full in its norm: all of its ASCII
    terms; of another script, only when the store holds one of the query's terms in that
    script (a Russian task over an English store is matched on its identifiers, as if its
    Russian words were not there, since no lesson could share them), and then not the CJK
    bigrams across a known word's boundary (:func:`_boundary_bigrams`)."""
    held = {script(token) for token, df in frequency.items() if df > 0}
    boundary = _boundary_bigrams(haystack, frequency)
    return sum(
        1
        for token, df in frequency.items()
        if df == 0 and token not in boundary and (token.isascii() or script(token) in held)
    )


def _boundary_bigrams(haystack: str, frequency: dict[str, int]) -> set[str]:
    """The query's CJK bigrams no entry holds that overlap one an entry holds: two characters
    across the boundary of a word the store knows ("送覆" of "强制推送覆盖"), which would
    otherwise weigh as a subject the store lacks and halve the share of a Chinese task that
    matches whole words. A bigram among other unheld ones still weighs in full, so a task on
    something the store never mentions keeps a small share."""
    out: set[str] = set()
    for run in cjk_runs(haystack):
        for k, gram in enumerate(run):
            if frequency.get(gram) != 0:
                continue
            neighbours = run[max(0, k - 1) : k] + run[k + 1 : k + 2]
            if any(frequency.get(n, 0) > 0 for n in neighbours):
                out.add(gram)
    return out


def _discard(postings: dict[str, set[int]], key: str, slot: int) -> None:
    bucket = postings.get(key)
    if bucket is not None:
        bucket.discard(slot)
        if not bucket:
            del postings[key]


def query_index(store: TierStore) -> QueryIndex:
    """The mirror's query index (call with ``mirror.mutex`` held, mirror refreshed)."""
    index: QueryIndex = mirror_index(store.tier_file.mirror, "query", QueryIndex)
    return index


def dense_index(store: TierStore, embedder: Embedder, limit: int | None = -1) -> DenseIndex:
    """The mirror's vectors under ``embedder`` (call with ``mirror.mutex`` held, refreshed),
    caught up embedding at most ``limit`` entries (``None``: all; ``-1``: the query path's,
    none unless the entries waiting are within :func:`~swarmq.knowledge._dense.inline_limit`)."""
    from swarmq.knowledge import _ftsindex, _vecindex  # numpy: hybrid only
    from swarmq.knowledge._dense import DenseIndex, inline_limit, sidecar_path

    mirror = store.tier_file.mirror
    index: DenseIndex = mirror_index(
        mirror,
        f"dense:{embedder.name}",
        lambda: DenseIndex(
            embedder,
            sidecar_path(store.files.knowledge),
            _ftsindex.sidecar_path(store.files.knowledge),
            _vecindex.lookup,
        ),
    )
    if limit == -1:
        index.catch_up(inline_limit(embedder), all_or_none=True)
    else:
        index.catch_up(limit)
    return index


def _dense_scores(store: TierStore, dense: DenseQuery, text: dict[int, float]) -> dict[int, float]:
    """Cosine of the lexical hits and of the DENSE_CANDIDATES nearest entries."""
    from swarmq.knowledge._dense import candidate_cosines  # numpy: hybrid only

    index = dense_index(store, dense.embedder)
    cosines = index.cosines(dense.vector)
    return candidate_cosines(cosines, index.slot_of_row, index.rows, text, DENSE_CANDIDATES)


Cosines = Callable[[dict[int, float], Wanted | None], DenseCosines]
"""Hybrid retrieval's cosines for :func:`rank_tier`: the dense candidates' and those of the
lexical hits (the keys of its first argument) that have a vector; a hit's bounds may be left
out when the second (not None) says the ranking never reads them."""


class TierView(Protocol):
    """What the ranking asks of a tier: the mirror's :class:`QueryIndex` in a process that
    keeps the store, or the persisted :class:`~swarmq.knowledge._ftsindex.FileIndex`."""

    def count(self) -> int: ...

    def frequency(self, term: str) -> int: ...

    def frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """:meth:`frequency` of each of ``terms``, asked at once."""
        ...

    def slots_with(self, term: str) -> Iterable[int]: ...

    def triggers(self, words: Sequence[str], haystack: str) -> Iterable[tuple[int, str]]:
        """The trigger phrases starting with one of ``words`` that ``haystack`` contains, by
        slot."""
        ...

    def keyed(self, kind: str, name: str) -> Iterable[int]: ...

    def facts(self, slots: Iterable[int]) -> dict[int, Facts]: ...

    def statics(self, slots: Iterable[int]) -> dict[int, float]:
        """The static score of each slot (``-inf`` inactive): :attr:`Facts.static`, cheaper."""
        ...

    def static_order(self) -> Iterable[tuple[float, int, str]]: ...

    def entries(self, slots: Sequence[int]) -> dict[int, Entry]: ...


class MirrorView:
    """A :class:`TierView` over the mirror's query index (mirror mutex held)."""

    def __init__(self, index: QueryIndex) -> None:
        self.index = index

    def count(self) -> int:
        return len(self.index.entries)

    def frequency(self, term: str) -> int:
        return len(self.index.tokens.get(term, ()))

    def frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        tokens = self.index.tokens
        return {term: len(tokens.get(term, ())) for term in terms}

    def slots_with(self, term: str) -> Iterable[int]:
        return sorted(self.index.tokens.get(term, ()))

    def triggers(self, words: Sequence[str], haystack: str) -> Iterable[tuple[int, str]]:
        found = self.index.triggers
        return [(s, p) for word in words for s, p in found.get(word, ()) if p in haystack]

    def keyed(self, kind: str, name: str) -> Iterable[int]:
        postings = self.index.tools if kind == "tool" else self.index.agents
        return sorted(postings.get(name, ()))

    def facts(self, slots: Iterable[int]) -> dict[int, Facts]:
        index = self.index
        return {
            slot: Facts(
                index.static[slot],
                index.scope_of[slot],
                index.priority[slot],
                index.confidence[slot],
                index.entries[slot].id,
            )
            for slot in slots
        }

    def statics(self, slots: Iterable[int]) -> dict[int, float]:
        static = self.index.static
        return {slot: static[slot] for slot in slots}

    def static_order(self) -> Iterable[tuple[float, int, str]]:
        scope_of = self.index.scope_of
        return ((negative, slot, scope_of[slot]) for negative, slot in self.index.order)

    def entries(self, slots: Sequence[int]) -> dict[int, Entry]:
        return {slot: self.index.entries[slot] for slot in slots}


def search_tier(
    store: TierStore, context: QueryContext, limit: int, dense: DenseQuery | None = None
) -> list[Ranked]:
    """The ``limit`` best active, in-scope entries of one tier (forced ones first); with
    ``dense``, entries near the task in meaning are candidates and relevant too. Reads the
    store's mirror (loading it if this process has not)."""
    mirror = store.tier_file.mirror
    with mirror.mutex:
        mirror.refresh()
        view = MirrorView(query_index(store))
        return rank_tier(
            view,
            store,
            context,
            limit,
            (lambda text, _: DenseCosines(_dense_scores(store, dense, text)))
            if dense is not None
            else None,
        )


def rank_tier(
    view: TierView,
    store: TierStore,
    context: QueryContext,
    limit: int,
    cosines: Cosines | None = None,
) -> list[Ranked]:
    """The ranking of :func:`search_tier` over any view of the tier; ties go to the smaller
    id, so the mirror and the persisted index answer alike. A cosine ``cosines`` gives only
    within bounds is made exact wherever the answer could depend on its value, so bounded and
    exact cosines give the same answer."""
    steps = ranking(view, store, context, limit, cosines)
    next(steps)
    return finished(steps)


Steps = Generator[None, None, list[Ranked]]
"""A tier's ranking in two halves: the first ``next`` reads the lexical half (postings,
trigger phrases, tool and agent keys, their facts), :func:`finished` runs the rest (the dense
half, which waits for the query's vector, and the ranking)."""


def finished(steps: Steps) -> list[Ranked]:
    """The answer of a ranking whose lexical half was read."""
    try:
        next(steps)
    except StopIteration as done:
        answer: list[Ranked] = done.value
        return answer
    raise RuntimeError("a tier's ranking has two halves")


def query_tokens(haystack: str) -> list[str]:
    """The query's terms a tier looks up (sorted, at most :data:`MAX_QUERY_TOKENS`): a
    function of the context's haystack alone, so a search of both tiers computes them once
    (:func:`ranking`'s ``tokens``)."""
    return sorted(set(retrieval_terms(haystack)))[:MAX_QUERY_TOKENS]


def ranking(
    view: TierView,
    store: TierStore,
    context: QueryContext,
    limit: int,
    cosines: Cosines | None = None,
    tokens: Sequence[str] | None = None,
) -> Steps:
    """:func:`rank_tier` in its two halves (:data:`Steps`): a search reads every tier's
    lexical half before any tier's dense half, so the query's embedding (on its own thread,
    :mod:`._ahead`) runs beside all of the lexical reads, not only the first tier's. The two
    halves read the same things in the same order as one pass would. ``tokens``: the
    :func:`query_tokens` of ``context``'s haystack when the caller has them (every tier of a
    search asks with the same ones)."""
    config = store.config
    scopes = set(context.scopes if context.scopes is not None else config.scope_filter)
    total = max(1, view.count())
    haystack = context.haystack()
    if tokens is None:
        tokens = query_tokens(haystack)
    cutoff = max(MIN_COMMON, COMMON_FRACTION * total)
    frequency = view.frequencies(tokens)
    selective = sorted((df, token) for token, df in frequency.items() if 0 < df <= cutoff)
    unseen = _unseen(haystack, frequency)
    weights = {token: math.log(1 + total / df) for df, token in selective[:MAX_SCORED_TOKENS]}
    # Terms no entry has weigh in full: matching "svg" of "draw a logo as svg with a gradient"
    # is a small share of what the task is about.
    norm = (
        sum(math.log(1 + total / df) for df, _ in selective) + unseen * math.log(1 + total)
    ) or 1.0
    text: dict[int, float] = {}
    for token, weight in weights.items():
        share = weight / norm
        for slot in view.slots_with(token):
            text[slot] = text.get(slot, 0.0) + share
    extras: dict[int, dict[str, float]] = {}
    for slot, _ in view.triggers(sorted(set(haystack.split())), haystack):
        extras.setdefault(slot, {})["trigger"] = WEIGHTS["trigger"]
    keyed = {
        key: list(view.keyed(key, (name or "").lower()))
        for key, name in (("tool", context.tool), ("agent", context.agent))
    }
    floor = (
        config.inject_min_relevance
        if config.retrieval == Retrieval.HYBRID
        else config.lexical_min_relevance
    )
    facts = view.facts({*keyed["tool"], *keyed["agent"]})
    textual = {slot for slot, share in text.items() if share >= floor}
    # Above the floor, a hit's bounds are read only when they reach the dense floor, or when
    # the hit is relevant by its words or a matched directive (scored whatever its cosine).
    wanted = (
        Wanted(config.dense_floor, frozenset((*textual, *extras, *keyed["tool"], *keyed["agent"])))
        if floor > 0
        else None
    )
    yield  # the lexical half read; the dense half may wait for the query's vector
    dense = cosines(text, wanted) if cosines is not None else DenseCosines({})
    for key, slots in keyed.items():
        for slot in slots:
            strong = facts[slot].confidence >= config.directive_min_confidence
            label = key if strong else f"weak_{key}"
            extras.setdefault(slot, {})[label] = WEIGHTS[label]
    dense_floor = config.dense_floor
    # A non-Latin task's cosine is evidence only beside a shared term (config.non_latin_needs_term).
    blind = config.non_latin_needs_term and non_latin(haystack)
    # A bounded cosine is made exact only where the ranking decides something with it: every
    # hit when all are scored, matched directives (which may be forced), and in the walk of
    # _best, the candidates that can still enter the answer.
    dense.resolve(dense.bounds.keys() if floor <= 0 else extras)
    relevant = (
        textual
        | {
            slot
            for slot, c in dense.exact.items()
            if c >= dense_floor and (not blind or slot in text)
        }
        | {
            slot
            for slot, (low, _) in dense.bounds.items()
            if low >= dense_floor and (not blind or slot in text)
        }
        | {slot for slot, found in extras.items() if found.keys() & {"trigger", "tool", "agent"}}
    )
    # Hits whose cosine's bounds straddle the dense floor: relevant or not once exact.
    maybe = {
        s
        for s, (low, high) in dense.bounds.items()
        if low < dense_floor <= high and (not blind or s in text)
    } - relevant
    # Above a floor only relevant entries (and matched directives, which may be forced) can be
    # chosen: the ranking fields of the other text hits are never looked at.
    scored = {*text, *dense.exact, *extras} if floor <= 0 else {*relevant, *maybe, *extras}
    facts.update(view.facts(extras.keys() - facts.keys()))  # matched directives: may be forced
    static = view.statics(scored - facts.keys())
    static.update((slot, found.static) for slot, found in facts.items())

    def score_of(slot: int, c: float | None) -> float:
        """The slot's score with cosine ``c`` (monotone in ``c``: a bound's score bounds it)."""
        value = static[slot]
        share = text.get(slot)
        if share is not None:
            value = value + WEIGHTS["text"] * share
        if c is not None:
            value = value + config.dense_weight * max(0.0, c)
        bonus = extras.get(slot)
        if bonus is not None:
            value = value + sum(bonus.values())
        return value

    def uppers(pool: Iterable[int]) -> dict[int, float]:
        """``score_of`` each active slot of ``pool`` at its cosine's upper bound: the same
        operations in the same order, inlined (tens of thousands of slots at 1M)."""
        text_at, extras_at = text.get, extras.get
        bounds_at, exact_at = dense.bounds.get, dense.exact.get
        by_text, by_dense = WEIGHTS["text"], config.dense_weight
        out: dict[int, float] = {}
        for slot in pool:
            value = static[slot]
            if value == -math.inf:
                continue
            share = text_at(slot)
            if share is not None:
                value = value + by_text * share
            bounds = bounds_at(slot)
            c = exact_at(slot) if bounds is None else bounds[1]
            if c is not None:
                value = value + by_dense * max(0.0, c)
            bonus = extras_at(slot)
            if bonus is not None:
                value = value + sum(bonus.values())
            out[slot] = value
        return out

    forced_scores = {
        slot: value
        for slot in extras
        if facts[slot].priority == "critical"
        and facts[slot].scope in scopes
        and (value := score_of(slot, dense.exact.get(slot))) != -math.inf
    }
    forced = sorted(forced_scores, key=lambda s: (-forced_scores[s], facts[s].id))
    best = _best(
        view,
        limit,
        scored if floor <= 0 else relevant | maybe,
        score_of,
        uppers,
        dense,
        facts,
        lambda slot: (
            facts[slot].scope in scopes and (slot not in maybe or dense.exact[slot] >= dense_floor)
        ),
    )
    chosen = dict.fromkeys([*forced, *best])
    taken = 0
    for negative, slot, scope in view.static_order() if floor <= 0 else ():
        if taken >= limit or negative == math.inf:
            break
        if slot in chosen or slot in text or slot in extras or slot in dense:
            continue
        if scope in scopes:
            chosen[slot] = None
            taken += 1
    dynamic = {
        slot: {
            **(
                {"text": WEIGHTS["text"] * text[slot], "relevance": round(text[slot], 6)}
                if slot in text
                else {}
            ),
            **extras.get(slot, {}),
            **(
                {"dense": config.dense_weight * max(0.0, c), "cosine": c}
                if (c := dense.exact.get(slot)) is not None
                else {}
            ),
        }
        for slot in chosen
    }
    entries = view.entries(list(chosen))
    results = [
        _ranked(store, entries[slot], dynamic[slot], static_breakdown(entries[slot]))
        for slot in chosen
    ]
    results.sort(key=_order)
    return results[: max(limit, sum(1 for r in results if r.forced))]


WALK_BATCH = 64
"""Candidates whose ranking fields are read at a time, best possible score first."""


def _best(
    view: TierView,
    limit: int,
    pool: set[int],
    score_of: Callable[[int, float | None], float],
    uppers: Callable[[Iterable[int]], dict[int, float]],
    dense: DenseCosines,
    facts: dict[int, Facts],
    eligible: Callable[[int], bool],
) -> list[int]:
    """The ``limit`` best active slots of ``pool`` by score that are ``eligible`` (asked once
    the slot's facts are read and its cosine exact), ties to the smaller id.

    At 1M entries the pool (every relevant entry) runs to tens of thousands, while the answer
    is a dozen. Each candidate's score is known, up to its cosine's bounds, from its static
    score alone (:meth:`TierView.statics`); the candidates are walked best possible score
    first, and only the walked ones have their ranking fields read (scope, id) and their
    cosines made exact. The walk stops once ``limit`` eligible candidates score strictly more
    than the best any unwalked candidate could, so none of those could be chosen."""
    high = uppers(pool)
    order = sorted(high, key=high.__getitem__, reverse=True)
    kept: dict[int, float] = {}
    floor: list[float] = []
    """The best ``limit`` scores kept so far, as a min-heap."""
    for start in range(0, len(order) if limit > 0 else 0, WALK_BATCH):
        if len(floor) >= limit and high[order[start]] < floor[0]:
            break
        batch = order[start : start + WALK_BATCH]
        facts.update(view.facts([slot for slot in batch if slot not in facts]))
        dense.resolve(batch)
        for slot in batch:
            if not eligible(slot):
                continue
            value = kept[slot] = score_of(slot, dense.exact.get(slot))
            if len(floor) < limit:
                heapq.heappush(floor, value)
            elif value > floor[0]:
                heapq.heapreplace(floor, value)
    return heapq.nsmallest(limit, kept, key=lambda s: (-kept[s], facts[s].id))


def _order(ranked: Ranked) -> tuple[bool, float, str]:
    """Forced first, then by score; ties to the smaller id (whatever view ranked them)."""
    return (not ranked.forced, -ranked.score, ranked.entry.id)


def _ranked(
    store: TierStore, entry: Entry, dynamic: dict[str, float], static: dict[str, float]
) -> Ranked:
    relevance = dynamic.pop("relevance", 0.0)
    cosine = dynamic.pop("cosine", None)
    breakdown = {**static, **dynamic}
    matched = any(k in dynamic for k in ("trigger", "tool", "agent", "weak_tool", "weak_agent"))
    forced = entry.priority == "critical" and matched
    score = sum(breakdown.values())
    breakdown["relevance"] = relevance
    if cosine is not None:
        breakdown["cosine"] = round(cosine, 6)
    breakdown["final"] = score
    return Ranked(entry, str(store.tier), score, breakdown, forced)


def search(
    knowledge: KnowledgeStore, context: QueryContext, limit: int | None = None
) -> list[Ranked]:
    """Swarm + hive merged: hive entries that near-duplicate an active swarm entry are
    dropped, then everything is ranked (forced critical directives first).

    A store this process has not loaded is read through its persisted index
    (:mod:`._ftsindex`, ``persistent_index``; under hybrid retrieval with the entries' vectors,
    :mod:`._vecindex`), so a fresh process parses only the entries it returns; an index found
    stale on reading is rebuilt and the search retried once, then the
    stores are loaded.

    The cyclic collector is paused meanwhile: a search through the index allocates a few
    thousand objects and no cycles, but in a fresh process the collector's first full pass over
    everything the imports just created (numpy and the model's libraries included) would land
    in it, about 40 ms whatever the store's size; a store loaded whole allocates objects that
    all survive, which the collector's passes only slow down."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        dense = _embedding(knowledge, context)
        for rebuild in (False, True):
            try:
                return _search(knowledge, context, limit, dense, persisted=True, rebuild=rebuild)
            except StaleIndex as exc:
                log.warning(
                    "knowledge index stale (%s); %s",
                    exc,
                    "loading the stores" if rebuild else "rebuilding it",
                )
        return _search(knowledge, context, limit, dense, persisted=False, rebuild=False)
    finally:
        if collecting:
            gc.enable()


def _search(
    knowledge: KnowledgeStore,
    context: QueryContext,
    limit: int | None,
    dense: PendingVector | None,
    *,
    persisted: bool,
    rebuild: bool,
) -> list[Ranked]:
    config = knowledge.config
    if limit is None:
        limit = (
            config.delegate_max_inject_count
            if context.mode == RetrievalMode.DELEGATION
            else config.max_inject_count
        )
    pool = limit * 2 + 4
    use = persisted and config.persistent_index
    embedder = dense.embedder if dense is not None else None
    with contextlib.ExitStack() as stack:
        swarm_index = _open_index(knowledge.swarm, stack, rebuild, embedder) if use else None
        # both opened before either is ranked: the hive's open runs while the query embeds
        hive_index = (
            _open_index(knowledge.hive, stack, rebuild, embedder)
            if use and config.hive_enabled
            else None
        )
        # both tiers' lexical halves before either dense half: the query embeds meanwhile
        tokens = query_tokens(context.haystack())  # the same for both tiers: computed once
        hold = _holds(swarm_index, hive_index)
        swarm_steps = _tier_steps(knowledge.swarm, swarm_index, context, pool, dense, tokens, hold)
        next(swarm_steps)
        hive_steps = None
        if config.hive_enabled:
            hive_steps = _tier_steps(knowledge.hive, hive_index, context, pool, dense, tokens, hold)
            next(hive_steps)
        results = finished(swarm_steps)
        if hive_steps is not None:
            threshold = knowledge.swarm.config.dedup_threshold
            hive = finished(hive_steps)
            for ranked in sorted(hive, key=_order):
                if not ranked.forced and _outranked(results, ranked, limit, config):
                    continue  # cut from the answer whatever the check says: not checked
                lesson = ranked.entry.lesson
                if swarm_index is not None:
                    duplicate = swarm_index.has_near_duplicate(lesson, threshold)
                else:
                    duplicate = knowledge.swarm.find_duplicate(lesson) is not None
                if not duplicate:
                    results.append(ranked)
    results = [r for r in results if r.entry.confidence >= config.inject_min_confidence]
    results.sort(key=_order)
    return results[: max(limit, sum(1 for r in results if r.forced))]


def _outranked(results: list[Ranked], ranked: Ranked, limit: int, config: KnowledgeConfig) -> bool:
    """Whether ``limit`` kept results come before ``ranked``: an unforced result after them
    is past the answer's cut (forced ones all come first)."""
    key = _order(ranked)
    floor = config.inject_min_confidence
    ahead = sum(1 for r in results if r.entry.confidence >= floor and _order(r) < key)
    return ahead >= limit


def hold_indexes(on: bool = True) -> None:
    """Have this process hold each store's index connection and file handle from one search to
    the next (a resident process: the hook server), verified on every search as a fresh open
    verifies them (:mod:`._heldindex`); ``False``: close them and stop."""
    _heldindex.hold(on)


def _open_index(
    store: TierStore, stack: contextlib.ExitStack, rebuild: bool, embedder: Embedder | None
) -> FileIndex | None:
    """The store's persisted index (with its vectors under ``embedder``), when this process
    has not loaded the store (a loaded mirror answers faster) and the index can be opened."""
    if store.tier_file.mirror.state is not None:
        return None
    try:
        index = FileIndex.open(store.files.knowledge, rebuild=rebuild, embedder=embedder, hold=True)
    except (OSError, sqlite3.Error) as exc:
        log.warning(
            "knowledge index of %s unusable (%s); loading the store", store.files.knowledge, exc
        )
        return None
    return None if index is None else stack.enter_context(index)


def _holds(*indexes: FileIndex | None) -> bool:
    """Whether a search may hold its tiers' vectors in memory for the next one: not when one
    of its tiers is scanned through maps whatever the process holds (a tier of a million rows:
    :attr:`~swarmq.knowledge._vecindex.VectorView.mapped`). That tier's scan is most of the
    search (100-300 ms at 1M rows), so holding the others' rows would save a few per cent of
    it (the maps of a 100k tier's codes, ~3-4 ms) for their whole size in the server (39 MB of
    codes at 100k MiniLM rows, 13 % of a 300 MB bound); a search of smaller tiers alone holds
    them, its scans that much faster."""
    views = [index.vectors for index in indexes if index is not None]
    return not any(view is not None and view.mapped for view in views)


def _tier_steps(
    store: TierStore,
    index: FileIndex | None,
    context: QueryContext,
    limit: int,
    dense: PendingVector | None,
    tokens: Sequence[str] | None = None,
    hold: bool = True,
) -> Steps:
    """One tier's ranking in two halves (:data:`Steps`); a store this process keeps in memory
    is ranked whole in the second (under its mirror's lock, which the first must not hold).
    ``tokens``: the context's :func:`query_tokens`, when the search computed them; ``hold``:
    whether the tier's vectors may be held in memory for the next search (:func:`_holds`)."""
    if index is None:
        yield
        query = DenseQuery(dense.embedder, dense.vector()) if dense is not None else None
        return search_tier(store, context, limit, query)
    vectors = index.vectors
    if dense is None or vectors is None:
        return (yield from ranking(index, store, context, limit, tokens=tokens))
    return (
        yield from ranking(
            index,
            store,
            context,
            limit,
            lambda text, wanted: vectors.scores(
                dense.vector(), text, DENSE_CANDIDATES, wanted, hold
            ),
            tokens,
        )
    )


def _embedding(knowledge: KnowledgeStore, context: QueryContext) -> PendingVector | None:
    """The task embedded once for every tier, on the embedding thread (:mod:`._ahead`) so that
    the tiers' indexes are opened and their lexical postings read meanwhile; ``None`` under
    lexical retrieval or with no text to embed."""
    embedder = knowledge.embedder
    haystack = context.haystack()
    if embedder is None or not haystack.strip():
        return None
    return PendingVector(embedder, haystack)
