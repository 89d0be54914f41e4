"""Many stores' answers as one list: reciprocal-rank fusion, one result per fact.

Stores score on scales that cannot be compared (a knowledge entry's static + relevance sum, a
learning's word share tilted by utility, a memory line's phrase and overlap), so only their
ranks are: a finding scores ``1 / (RRF_K + rank)`` in its store's answer (Cormack, Clarke and
Büttcher 2009; k = 60 as there), and a fact found by several stores sums its stores' terms, so
agreement lifts it. Ties (the first of each store) go to the higher relevance share, then to
the store :data:`~swarmq.federated.finding.PREFERENCE` puts first.

One fact, one result: findings sharing an artifact key (a learning and the knowledge entry the
flywheel bridge published from it name the same artifact in ``source_refs``) are one, and so
are near-identical texts of two stores (opencode-swarm's word-bigram Jaccard at the store's
``dedup_threshold``, or 0.8 of the same words). Two findings of a store that deduplicates what
is written to it (the knowledge store, the flywheel) are folded by their text only when it is
the same text: the store kept them apart when they were written (templated tool-error lessons,
"`cat …/workflow.md` failed …" and "`cat …/step-01-init.md` failed …", share most of their words
and are still two lessons), or when they are tool-error lessons that say the same beyond their
instance (:func:`stated`: one rule met on three calls is one fact). Memory deduplicates nothing (a mission's objective stands in its
``SUMMARY.md``, its handoff and their archived copies alike), so two memory lines are folded
by the near-identity rule as two stores' findings are. The finding that stands for the fact
is the preferred store's (a knowledge entry: it is what acknowledgements name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from swarmq.federated.finding import PREFERENCE, Finding, Fused, Store
from swarmq.similarity.text import jaccard, normalize_opencode, word_bigrams, word_tokens

RRF_K = 60
UNDEDUPLICATED = frozenset({Store.WORKER_MEMORY, Store.SHARED_MEMORY})
"""Stores whose own findings may be near-identical: nothing merges memory lines as written."""
SAME_WORDS = 0.8
"""Word-set Jaccard at which two texts say the same thing (whatever their word order)."""
STATED_WORDS = 5
"""The fewest words a tool-error lesson's stated cause or fact has to fold its instances."""
_FAILED_CALL = re.compile(r"^`[^`\n]+` failed \(")
_MARKS = re.compile(r"[`();]")
_LAST_STEP = re.compile(
    r"^(?:`[^`]*` worked instead|after `[^`]*` the same call worked|no retry worked)"
)


def stated(text: str) -> str:
    """What a tool-error lesson says beyond its instance, normalised: the cause and the fact
    between "`call` failed (error)" and the call that worked (``""`` for any other text, or
    when that part is shorter than :data:`STATED_WORDS` words).

    Forge writes one lesson per failing call, so one rule met on three files is three lessons
    ("`apply_patch … README.md` failed (invalid hunk at line 3 …); in an `*** Add File:` hunk
    every line needs a `+` prefix; …") that differ in their call and error only; shown
    together they fill an agent's block with one fact. Lessons that differ in what they say
    (where the missing file really is) keep different cures and stay apart."""
    call = _FAILED_CALL.match(text)
    if not call:
        return ""
    parts: list[str] = []
    depth, quoted, start = 0, False, -1
    for mark in _MARKS.finditer(text, call.end() - 1):  # only the characters that matter
        at, char = mark.start(), mark.group()
        if char == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif start < 0 and char in "()":
            depth += 1 if char == "(" else -1
            start = at + 1 if depth == 0 else -1
        elif start >= 0 and char == ";":
            parts.append(text[start:at].strip())
            start = at + 1
    if start < 0:
        return ""  # the error's parenthesis never closes: a clipped lesson
    parts.append(text[start:].strip())
    kept = [p for p in parts if p and not _LAST_STEP.match(p)]
    said = normalize_opencode(" ".join(kept))
    return said if len(said.split()) >= STATED_WORDS else ""


class _Groups:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


@dataclass(frozen=True, slots=True)
class _Shape:
    """A text's forms the near-identity test compares (computed once per finding)."""

    normal: str
    bigrams: frozenset[str]
    words: frozenset[str]
    stated: str

    @classmethod
    def of(cls, text: str) -> _Shape:
        return cls(normalize_opencode(text), word_bigrams(text), word_tokens(text), stated(text))

    def folds(self, other: _Shape, stores: tuple[Store, Store], threshold: float) -> bool:
        """Whether findings of ``stores`` with these texts are one fact."""
        if stores[0] != stores[1] or stores[0] in UNDEDUPLICATED:
            return self.same(other, threshold)
        return self.equal(other)

    def equal(self, other: _Shape) -> bool:
        """The same text, or tool-error lessons that say the same beyond their instance."""
        return (bool(self.normal) and self.normal == other.normal) or (
            bool(self.stated) and self.stated == other.stated
        )

    def same(self, other: _Shape, threshold: float) -> bool:
        if self.equal(other):
            return True
        if self.bigrams and other.bigrams and jaccard(self.bigrams, other.bigrams) >= threshold:
            return True
        return (
            len(self.words) >= 4
            and len(other.words) >= 4
            and jaccard(self.words, other.words) >= SAME_WORDS
        )


def same_text(a: str, b: str, threshold: float) -> bool:
    """Whether two texts are near-identical (never true of two texts with no words)."""
    return _Shape.of(a).same(_Shape.of(b), threshold)


def fuse(
    answers: Sequence[Sequence[Finding]],
    *,
    dedup_threshold: float = 0.6,
    prefer: Sequence[Store] = PREFERENCE,
) -> list[Fused]:
    """Every store's answer (one sequence per store, in its own order) fused, best first;
    forced directives lead; ``prefer`` says which store's finding stands for a shared fact."""
    findings = [f for answer in answers for f in answer]
    answer_of = [i for i, answer in enumerate(answers) for _ in answer]
    groups = _Groups(len(findings))
    first_with: dict[str, int] = {}
    for index, finding in enumerate(findings):
        for key in sorted(finding.links):
            if key in first_with:
                groups.join(first_with[key], index)
            else:
                first_with[key] = index
    _fold_texts(findings, groups, dedup_threshold)
    members: dict[int, list[int]] = {}
    for index in range(len(findings)):
        members.setdefault(groups.find(index), []).append(index)
    out = []
    for indexes in members.values():
        best_rank: dict[int, int] = {}
        for index in indexes:
            answer = answer_of[index]
            best_rank[answer] = min(
                best_rank.get(answer, findings[index].rank), findings[index].rank
            )
        score = sum(1.0 / (RRF_K + rank) for rank in best_rank.values())
        chosen = sorted(
            (findings[i] for i in indexes),
            key=lambda f: (prefer.index(f.store), f.rank, f.id),
        )
        out.append(Fused(chosen[0], score, tuple(chosen[1:])))
    out.sort(key=lambda fused: _order(fused, prefer))
    return out


def _fold_texts(findings: Sequence[Finding], groups: _Groups, threshold: float) -> None:
    """Join every pair of findings that :meth:`_Shape.folds` says are one fact. Two findings of
    one deduplicating store fold only on the same normalised text, so those pairs are found by
    that text in a dictionary; every other pair (two stores' findings, or two memory lines) is
    tested. The groups are those of testing every pair, which cost 0.5 s at a session start on
    a 100k store (its answer holds every fact of the store, a million pairs)."""
    by_store: dict[Store, list[int]] = {}
    for index, finding in enumerate(findings):
        by_store.setdefault(finding.store, []).append(index)
    shapes: dict[int, _Shape] = {}

    def shape(index: int) -> _Shape:
        if index not in shapes:
            shapes[index] = _Shape.of(findings[index].text)
        return shapes[index]

    def test(i: int, j: int) -> None:
        stores = (findings[i].store, findings[j].store)
        if groups.find(i) != groups.find(j) and shape(i).folds(shape(j), stores, threshold):
            groups.join(i, j)

    ordered = list(by_store.items())
    for position, (store, indexes) in enumerate(ordered):
        if store in UNDEDUPLICATED:
            for k, i in enumerate(indexes):
                for j in indexes[k + 1 :]:
                    test(i, j)
        else:
            first_with: dict[str, int] = {}
            for i in indexes:
                normal = normalize_opencode(findings[i].text)
                if normal:
                    groups.join(first_with.setdefault(normal, i), i)
                said = stated(findings[i].text)
                if said:
                    groups.join(first_with.setdefault(f"stated:{said}", i), i)
        for _, others in ordered[position + 1 :]:
            for i in indexes:
                for j in others:
                    test(i, j)


def _order(fused: Fused, prefer: Sequence[Store]) -> tuple[bool, float, float, int, str]:
    members = fused.members
    return (
        not any(f.forced for f in members),
        -fused.score,
        -max(f.relevance for f in members),
        prefer.index(fused.finding.store),
        fused.finding.id,
    )
