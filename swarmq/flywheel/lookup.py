"""``lookup``: find the learnings, patterns and pool candidates that match a query, and cite them.

Relevance is the share of the query's words found in an artifact (stop words ignored), or,
given the cosine of each artifact's text to the query (``cosines``: a caller that holds an
embedding model, ``swarmq.federated.meaning``), the mean of that share and the cosine (of its
whole text, or of its title alone when that is nearer and titles are measured), and a learning
or pattern is relevant when either reaches its floor (a pool candidate only by its words); utility then tilts the ranking, score = relevance · (1 + λ·(utility − 0.5)) with λ = 0.5, so knowledge
that proved useful rises and knowledge that misled sinks. Every returned artifact is cited
(``retrieved`` unless told otherwise) in ``.agents/ao/citations.jsonl``; a candidate still in
the pool is cited by its pool path. A retrieval is exposure: it never promotes a candidate
(only a confirming type such as ``--cite-as helpful|applied|reference`` counts; see
``swarmq.flywheel.confirm``).
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel._pending import parse_learning_blocks
from swarmq.flywheel.artifacts import Learning, learning_files, read_learning, title_line
from swarmq.flywheel.citations import (
    CitationType,
    citation_event,
    display_path,
    record_citations,
)
from swarmq.flywheel.content import canonical_content_body
from swarmq.flywheel.model import LAMBDA, Maturity, PoolStatus
from swarmq.flywheel.pool import Pool, PoolEntry
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.secrets import redacted
from swarmq.similarity.normalize import retrieval_terms
from swarmq.similarity.script import non_latin
from swarmq.storage.locking import StoreLocks

_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")
_STOP = (
    "a an the and or but if then of to in on at by for with from as is are was were be been it its "
    "this that these those we i you he she they do does did how what why when where which who "
    "should can could would will not no yes"
)
STOP_WORDS = frozenset(_STOP.split())


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def rarity(wanted: set[str], corpus: Sequence[frozenset[str]]) -> dict[str, float]:
    """Each of the task's content words weighted by how few of ``corpus`` (the workspace's
    learnings and patterns, as their content words) hold it: ``1 + ln((N + 1) / (df + 1))``.

    A workspace's records share its project's vocabulary: in a store whose every learning is a
    stage plan, "stage" and "plan" are in most of them, so a task "Stage 1 legacy inventory
    plan" holds three of five words of the wrong learning as of the right one, and a floor that
    keeps unrelated tasks silent silences it too (docs/QUALITY.md, "Issue 26: reach misses left
    one workspace out, by cause"). Weighted this way, a record holding the task's rare words
    (``legacy``, ``inventory``) leads one holding its common ones."""
    n = len(corpus)
    weights: dict[str, float] = {}
    for word in wanted:  # a membership test per record and word: 3x faster than intersecting
        df = 0
        for found in corpus:
            if word in found:
                df += 1
        weights[word] = 1.0 + math.log((n + 1) / (df + 1))
    return weights


def rare_share(weights: dict[str, float], found: frozenset[str]) -> float:
    """The share of the task's words ``found`` holds, each word counted at its :func:`rarity`.

    Summed exactly (``math.fsum``): the words come from a set, whose order changes with each
    process's string hashing, and a plain sum's last bit with it, so the same task against the
    same store could fall on either side of the learned floor from one process to the next."""
    total = math.fsum(weights.values())
    if not total:
        return 0.0
    return math.fsum(weight for word, weight in weights.items() if word in found) / total


@dataclass(frozen=True, slots=True)
class LookupHit:
    kind: str
    """``learning``, ``pattern`` or ``candidate``."""
    id: str
    title: str
    type: str
    maturity: str
    utility: float
    relevance: float
    score: float
    path: str
    cite_as: str
    snippet: str
    text: str = ""
    """The whole body (redacted), for a reader that shows lessons whole."""
    cosine: float | None = None
    """Its cosine to the query, when the search measured meaning."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _score(relevance: float, utility: float) -> float:
    return relevance * (1.0 + LAMBDA * (utility - 0.5))


Cosines = Callable[[Sequence[str]], Sequence[float]]
"""Texts -> the cosine of each to the query (one batch per search)."""


def search(
    layout: AgentsLayout,
    query: str,
    *,
    limit: int = 10,
    min_relevance: float = 0.34,
    include_pool: bool = True,
    cosines: Cosines | None = None,
    min_cosine: float = 1.0,
    min_title_cosine: float | None = None,
    learned: LearnedRelevance | None = None,
    non_latin_needs_term: bool = False,
) -> list[LookupHit]:
    """Rank artifacts for ``query`` (nothing is written): those holding ``min_relevance`` of its
    content words, and, given ``cosines``, learnings and patterns whose text reaches
    ``min_cosine`` or (given ``min_title_cosine``) whose title alone reaches that floor. Given
    ``learned`` too (a relevance fitted on the cosines' model), a learning or pattern is
    relevant, and ranked, by that model of its share, text cosine and title cosine instead of
    by the floors; a pool candidate still by its words.

    The title is measured apart because a task is worded as a commit subject or an issue title:
    short, one subject. A learning's vector is a mean over its title and body, and the body
    (the story, the fix, why it matters) pulls it toward everything else the body mentions, so
    a title that says exactly what the task says (``Verify Reviewer Suggestions Before
    Implementing`` for "Address the review comments on the workflows pull request") sits below
    the body floor (docs/QUALITY.md, "Issue 26: why every-store tasks miss"). Short against
    short is on another cosine scale, hence a parameter of its own (set, for now, to the
    flywheel floor: a value fitted apart did not transfer); a record ranks by the nearer of the
    two.

    A pool candidate is reached by its words alone (its cosine, when measured, only ranks it):
    it passed no gate (forged from one transcript, held until something confirms it), the
    meaning floors were calibrated on learnings and patterns with no candidate among them
    (docs/QUALITY.md, "Issue 26: meaning-aware ranking"), and the forge leaves candidates on
    every mission's subject, near in meaning to any later task on it (the demo's fourth mission
    was shown the third's held candidate at cosine 0.43, holding 2 of its 8 words).

    With ``non_latin_needs_term``, a query in a non-Latin script is measured in meaning only
    against records that share a term with it (its retrieval terms: words and CJK bigrams); the
    others are judged by their words alone. The cosines' English model puts any two Chinese or
    Japanese texts near each other, so a short policy note in the store's language would
    otherwise answer every task (docs/QUALITY.md, "Issue 26: why silent CJK tasks are
    answered")."""
    wanted = words(query)
    if not wanted:
        return []
    never = float("inf")
    terms = frozenset(retrieval_terms(query)) if non_latin_needs_term and non_latin(query) else None
    weights: dict[str, float] = {}  # the task's words by rarity, once the records are read

    def weigh(corpus: Sequence[frozenset[str]]) -> None:
        weights.update(rarity(wanted, corpus))

    def rater(floor: float, title_floor: float) -> Rate:
        def rate(
            body: str, found: frozenset[str], recorded: str | None, cosine: Near | None
        ) -> float | None:
            share = len(wanted & found) / len(wanted)
            if terms is not None and terms.isdisjoint(retrieval_terms(body)):
                cosine = None  # an English model's cosine between two such texts says nothing
            if cosine is None:
                return share if share >= min_relevance else None
            body_cosine, title_cosine = cosine
            if learned is not None and floor < never:  # learnings and patterns, not the pool
                rare = rare_share(weights, found)
                return learned.relevance(share, body_cosine, title_cosine, rare)
            titled = title_cosine is not None and title_cosine >= title_floor
            if share < min_relevance and body_cosine < floor and not titled:
                return None
            return fused_relevance(share, _nearer(cosine))

        return rate

    return _ranked(
        layout,
        rater(min_cosine, never if min_title_cosine is None else min_title_cosine),
        limit,
        include_pool,
        cosines,
        rate_pool=rater(never, never),
        titles=min_title_cosine is not None or learned is not None,
        corpus=weigh if learned is not None and cosines is not None else None,
    )


def _nearer(near: Near) -> float:
    body, title = near
    return body if title is None else max(body, title)


def fused_relevance(share: float, cosine: float) -> float:
    """One relevance from a record's word share and its cosine (both 0..1 in practice): their
    mean, so a record both measures agree on leads one only either finds."""
    return (share + max(0.0, cosine)) / 2


Near = tuple[float, float | None]
"""An artifact's cosine to the query: its meaning text's, and its title's (``None``: not
measured)."""
Rate = Callable[[str, frozenset[str], str | None, Near | None], float | None]
"""``(body, its content words, recorded failure signature or None, its cosines to the query or
None) -> relevance, or None``."""


def _ranked(
    layout: AgentsLayout,
    rate: Rate,
    limit: int,
    include_pool: bool,
    cosines: Cosines | None = None,
    *,
    rate_pool: Rate | None = None,
    titles: bool = False,
    corpus: Callable[[Sequence[frozenset[str]]], None] | None = None,
) -> list[LookupHit]:
    """Every learning and pattern ``rate`` keeps and (with ``include_pool``) every pool
    candidate ``rate_pool`` keeps (default: ``rate``), its relevance tilted by utility, best
    first, cut to ``limit`` and redacted. With ``cosines``, every artifact's meaning text (and,
    with ``titles``, every learning's and pattern's title) is measured against the query in one
    batch first; ``corpus`` is given every learning's and pattern's content words before any is
    rated (what :func:`rarity` counts)."""
    root = layout.root.parent
    patterns = layout.patterns
    learnings: list[tuple[Path, str, _Parsed, tuple[str, str, str, frozenset[str], str]]] = []
    for path in learning_files(layout.learnings, patterns):
        parsed = _parsed(path)
        if parsed is None:
            continue
        kind = "pattern" if path.parent == patterns else "learning"
        learnings.extend((path, kind, parsed, entry) for entry in parsed.entries)
    if corpus is not None:
        corpus([entry[3] for *_, entry in learnings])
    candidates = _pool_candidates(layout) if include_pool else []
    measured: Sequence[Near | None] = [None] * (len(learnings) + len(candidates))
    if cosines is not None and measured:
        texts = [entry[4] for *_, entry in learnings] + [c.meaning for _, c in candidates]
        named = [i for i, (*_, entry) in enumerate(learnings) if titles and entry[1].strip()]
        values = cosines(texts + [learnings[i][3][1] for i in named])
        title_of: dict[int, float] = dict(zip(named, values[len(texts) :], strict=True))
        measured = [(value, title_of.get(i)) for i, value in enumerate(values[: len(texts)])]
    hits: list[LookupHit] = []
    for (path, kind, parsed, (entry_id, title, body, searchable, _)), cosine in zip(
        learnings, measured, strict=False
    ):
        relevance = rate(body, searchable, None, cosine)
        if relevance is None:
            continue
        hits.append(
            LookupHit(
                kind,
                entry_id,
                title,
                parsed.type or kind,
                parsed.maturity,
                parsed.utility,
                round(relevance, 4),
                round(_score(relevance, parsed.utility), 4),
                str(path),
                display_path(root, path),
                _snippet(body),
                body,
                None if cosine is None else round(_nearer(cosine), 4),
            )
        )
    rate_candidate = rate if rate_pool is None else rate_pool
    for (path, candidate), cosine in zip(candidates, measured[len(learnings) :], strict=True):
        relevance = rate_candidate(candidate.body, candidate.words, candidate.signature, cosine)
        if relevance is not None:
            hits.append(_candidate_hit(root, path, candidate, relevance, cosine))
    hits.sort(key=lambda h: (-h.score, -h.utility, h.path))
    # What lookup shows goes into an agent's context: never a secret, whatever a file holds.
    return [
        replace(
            hit, title=redacted(hit.title), snippet=redacted(hit.snippet), text=redacted(hit.text)
        )
        for hit in hits[:limit]
    ]


def _candidate_hit(
    root: Path, path: Path, candidate: _Candidate, relevance: float, cosine: Near | None
) -> LookupHit:
    return LookupHit(
        "candidate",
        candidate.id,
        candidate.title,
        candidate.type,
        candidate.maturity,
        candidate.utility,
        round(relevance, 4),
        round(_score(relevance, candidate.utility), 4),
        str(path),
        display_path(root, path),
        _snippet(candidate.body),
        candidate.body,
        None if cosine is None else round(_nearer(cosine), 4),
    )


Judge = Callable[[str, str | None], float | None]
"""``(body, recorded failure signature or None) -> relevance in 0..1, or None: not an answer``."""
SIGNATURE_KEY = "failure_signature"
"""A pool candidate's ``metadata`` key holding the failure signature recorded at ingest."""


def select(
    layout: AgentsLayout, judge: Judge, *, limit: int = 10, include_pool: bool = True
) -> list[LookupHit]:
    """The artifacts ``judge`` keeps, ranked as :func:`search` ranks (its relevance tilted by
    utility): the search for a question that is not words (a failure signature, a project
    fact), nothing written."""
    if limit <= 0:
        return []
    return _ranked(
        layout, lambda body, _found, recorded, _cosine: judge(body, recorded), limit, include_pool
    )


@dataclass(frozen=True, slots=True)
class _Parsed:
    """One learning file as search reads it: its ranking fields and each entry's id, title,
    body, content words and meaning text (what its vector is made of)."""

    type: str
    maturity: str
    utility: float
    entries: tuple[tuple[str, str, str, frozenset[str], str], ...]


_PARSED: dict[str, tuple[tuple[int, int], _Parsed | None]] = {}
_PARSED_LOCK = threading.Lock()
MAX_PARSED = 100_000
"""Learning files whose parse a process keeps (the cache is dropped whole past it)."""


def _parsed(path: Path) -> _Parsed | None:
    """The file parsed, from this process's cache while its size and mtime stay the same: a
    warm hook or MCP server searching on every prompt re-reads only the files that changed."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (stat.st_mtime_ns, stat.st_size)
    name = str(path)
    with _PARSED_LOCK:
        found = _PARSED.get(name)
    if found is not None and found[0] == key:
        return found[1]
    learning = read_learning(path)
    value = (
        None
        if learning is None
        else _Parsed(
            str(learning.fields.get("type") or ""),
            learning.maturity,
            learning.utility,
            tuple(
                (entry_id, title, body, frozenset(words(searchable)), meaning_text(title, body))
                for entry_id, title, body, searchable in _entries(learning)
            ),
        )
    )
    with _PARSED_LOCK:
        if len(_PARSED) >= MAX_PARSED:
            _PARSED.clear()
        _PARSED[name] = (key, value)
    return value


@dataclass(frozen=True, slots=True)
class _Candidate:
    """One pool candidate as search reads it."""

    id: str
    title: str
    type: str
    maturity: str
    utility: float
    body: str
    words: frozenset[str]
    signature: str | None
    """The failure signature recorded at ingest, if any."""
    meaning: str
    """What its vector is made of (:func:`meaning_text`)."""


_CANDIDATES: dict[str, tuple[tuple[int, int], _Candidate | None]] = {}


def _pool_candidates(layout: AgentsLayout) -> list[tuple[Path, _Candidate]]:
    """The pending and staged candidates, each file parsed once per process while its size and
    mtime stay the same (as :func:`_parsed` keeps learnings): a warm hook server answering every
    failing call from every store re-reads only the candidates that changed."""
    pool = Pool(layout)
    out: list[tuple[Path, _Candidate]] = []
    for status in (PoolStatus.PENDING, PoolStatus.STAGED):
        for path, current in pool.files(status):
            try:
                stat = os.stat(path)
            except OSError:
                continue
            key = (stat.st_mtime_ns, stat.st_size)
            name = str(path)
            with _PARSED_LOCK:
                found = _CANDIDATES.get(name)
            if found is None or found[0] != key:
                entry = pool.read(path, current)
                found = (key, None if entry is None else _candidate(entry))
                with _PARSED_LOCK:
                    if len(_CANDIDATES) >= MAX_PARSED:
                        _CANDIDATES.clear()
                    _CANDIDATES[name] = found
            if found[1] is not None:
                out.append((path, found[1]))
    return out


def _candidate(entry: PoolEntry) -> _Candidate:
    body = canonical_content_body(entry.content)
    utility = entry.candidate.get("utility")
    metadata = entry.candidate.get("metadata")
    recorded = metadata.get(SIGNATURE_KEY) if isinstance(metadata, dict) else None
    return _Candidate(
        entry.id,
        title_line(entry.content),
        entry.type,
        str(entry.candidate.get("maturity") or Maturity.PROVISIONAL),
        float(utility) if isinstance(utility, int | float) else 0.5,
        body,
        frozenset(words(body)),
        recorded if isinstance(recorded, str) else None,
        meaning_text(title_line(entry.content), body),
    )


def lookup(
    layout: AgentsLayout,
    locks: StoreLocks,
    query: str,
    *,
    session_id: str,
    limit: int = 10,
    cite: bool = True,
    citation_type: str = CitationType.RETRIEVED,
    agent_id: str | None = None,
    include_pool: bool = True,
    when: datetime | None = None,
) -> list[LookupHit]:
    """Search, then record one citation per hit (unless ``cite`` is false)."""
    if citation_type not in CitationType.ALL:
        raise ValueError(
            f"unknown citation type {citation_type!r}; one of {sorted(CitationType.ALL)}"
        )
    hits = search(layout, query, limit=limit, include_pool=include_pool)
    if cite and hits:
        record_citations(
            layout,
            locks,
            (
                # No match_confidence: a retrieval is exposure, not evidence of use (it would count
                # toward rho).
                citation_event(
                    hit.cite_as,
                    session_id,
                    citation_type,
                    query=query,
                    cited_by_agent_id=agent_id,
                    when=when,
                )
                for hit in hits
            ),
        )
    return hits


_HEADING = re.compile(r"^\s{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def _entries(learning: Learning) -> list[tuple[str, str, str, str]]:
    """``(id, title, body, searchable text)`` of each learning a file holds: one per
    ``# Learning:`` block (AgentOps files often hold several), else the file as one. The
    searchable text keeps the headings, which the canonical body leaves out."""
    if learning.path.suffix == ".md" and "# Learning:" in learning.text:
        blocks = parse_learning_blocks(learning.text)
        if len(blocks) > 1 or (blocks and blocks[0].body.startswith("# Learning:")):
            out = []
            for number, block in enumerate(blocks):
                body = canonical_content_body(block.body)
                entry_id = block.id or (
                    learning.id if len(blocks) == 1 else f"{learning.id}#{number + 1}"
                )
                headings = " ".join(_HEADING.findall(block.body))
                out.append((entry_id, block.title, body, f"{block.title}\n{headings}\n{body}"))
            return out
    body = learning.body
    title = title_line(body) or learning.path.stem
    headings = " ".join(_HEADING.findall(learning.text)) if learning.path.suffix == ".md" else ""
    return [(learning.id, title, body, f"{title}\n{headings}\n{body}")]


MEANING_CHARS = 1200
"""The start of an artifact a vector is made of: its title and the body's opening, where an
AgentOps learning states its lesson; a mean of every word of a long file (code, logs, a
checklist) drifts toward any task of the same kind."""


def meaning_text(title: str, body: str) -> str:
    """What an artifact's vector is made of: its title and the start of its body."""
    text = " ".join(body.split())[:MEANING_CHARS]
    return f"{title}\n{text}" if title and title not in text[: len(title) + 8] else text


def _snippet(body: str, limit: int = 240) -> str:
    text = " ".join(body.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
