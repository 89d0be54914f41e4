"""Layer-3 contradiction detection as opencode-swarm 7.x does it: opposing words sharing a neighbour.

Two lessons sharing a tag contradict when one says a word of a negation pair (``always``) and the
other its opposite (``never``) *and* the words within three tokens of each share at least one
word ("Always use typescript" / "Never use typescript" share ``use`` and ``typescript``). Words
are whole tokens of the normalised text, so "use" inside "because" does not count, and
``don't use`` never matches (the apostrophe became a space). The verdict is a warning: the lesson
is stored and flagged for review, never refused.

``strict`` mode drops apostrophes first (so ``don't use`` is seen), ignores stop words as shared
neighbours (two lessons sharing only "the" do not oppose each other) and does not count a positive
word that is part of its own negation ("must" in "must not").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from swarmq.knowledge.config import ValidationMode
from swarmq.knowledge.tags import infer_tags
from swarmq.similarity.text import normalize_opencode

NEGATION_PAIRS: tuple[tuple[str, str], ...] = (
    ("always", "never"),
    ("must", "must not"),
    ("must", "should not"),
    ("enable", "disable"),
    ("use", "avoid"),
    ("use", "don't use"),
    ("recommended", "not recommended"),
)
"""opencode-swarm's contradiction pairs ``(A, B)``: a lesson saying A may contradict one saying B."""

NEGATION_PHRASES: tuple[str, ...] = tuple(dict.fromkeys(p for pair in NEGATION_PAIRS for p in pair))
CONTEXT_WINDOW = 3

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "you",
        "your",
        "we",
        "our",
        "they",
        "their",
        "i",
        "he",
        "she",
        "not",
        "no",
        "do",
        "does",
        "did",
        "so",
        "can",
        "will",
        "would",
        "should",
        "must",
        "may",
        "might",
        "than",
        "when",
        "while",
        "into",
        "about",
    ]
)
"""Neighbours too common to show two lessons talk about the same thing (strict mode only)."""

_NEGATED_BY = {"must": ("not",), "use": ("not", "never", "dont"), "recommended": ("not",)}
"""Strict mode: a positive word directly after/before these belongs to its negation."""

Contexts = dict[str, frozenset[str]]


@lru_cache(maxsize=4096)
def normalize_semantic(text: str) -> str:
    """The validator's ``normalizeText``: NFKC, lower-case, ASCII words, single spaces (cached:
    an add needs it for its negation contexts and again for the vagueness check)."""
    return normalize_opencode(unicodedata.normalize("NFKC", text))


def context_words(
    words: list[str], term: str, window: int = CONTEXT_WINDOW, skip: frozenset[int] = frozenset()
) -> set[str]:
    """``extractContextWords``: the words within ``window`` of every whole-word occurrence of
    ``term`` (one or more words), the occurrence itself excluded; ``skip`` = positions to ignore."""
    context: set[str] = set()
    parts = term.split(" ")
    size = len(parts)
    i = 0
    while i <= len(words) - size:
        if words[i : i + size] == parts and i not in skip:
            for j in range(max(0, i - window), min(len(words), i + size + window)):
                if (j < i or j >= i + size) and words[j]:
                    context.add(words[j])
            i += size if size > 1 else 1
        else:
            i += 1
    return context


def _negated_positions(words: list[str], phrase: str) -> frozenset[int]:
    negators = _NEGATED_BY.get(phrase)
    if negators is None:
        return frozenset()
    if phrase == "must":  # "must not": the negator follows
        return frozenset(
            i for i, w in enumerate(words[:-1]) if w == phrase and words[i + 1] in negators
        )
    return frozenset(
        i for i, w in enumerate(words) if w == phrase and i > 0 and words[i - 1] in negators
    )


def negation_contexts(lesson: str, mode: ValidationMode = ValidationMode.OPENCODE) -> Contexts:
    """For each negation phrase the lesson says, the words around it (phrases with no
    neighbours are left out: they cannot overlap anything)."""
    strict = mode is ValidationMode.STRICT
    text = lesson.replace("'", "").replace("\u2019", "") if strict else lesson
    words = normalize_semantic(text).split(" ")
    present = set(words)
    found: Contexts = {}
    for phrase in NEGATION_PHRASES:
        term = phrase.replace("'", "") if strict else phrase
        if not present.issuperset(term.split(" ")):
            continue  # not said: no context (most phrases, most lessons)
        skip = _negated_positions(words, term) if strict else frozenset()
        context = context_words(words, term, skip=skip)
        if strict:
            context -= STOP_WORDS
        if context:
            found[phrase] = frozenset(context)
    return found


def opposed(left: Contexts, right: Contexts) -> bool:
    """``detectContradiction`` for one pair of lessons (tags aside): an opposing phrase pair whose
    neighbourhoods share a word, in either direction."""
    for a, b in NEGATION_PAIRS:
        if a in left and b in right and left[a] & right[b]:
            return True
        if b in left and a in right and left[b] & right[a]:
            return True
    return False


@lru_cache(maxsize=262_144)
def _pair_contexts(text: str, mode: ValidationMode) -> Contexts:
    return negation_contexts(text, mode)


def pair_contradicts(left: str, right: str, mode: ValidationMode) -> bool:
    """Whether two texts contradict, counting only negation phrases that just one of them says
    ("always X" against "always X, never Y" is a refinement, not a contradiction): the test
    consolidation applies to each pair it compares."""
    a, b = _pair_contexts(left, mode), _pair_contexts(right, mode)
    only_a = {k: v for k, v in a.items() if k not in b}
    only_b = {k: v for k, v in b.items() if k not in a}
    return opposed(only_a, only_b)


class ContradictionIndex:
    """Counts of ``(tag, phrase, neighbour)`` over the existing lessons, so the contradiction test
    costs O(tags × phrases × neighbours) instead of a scan of every lesson. A hit on
    ``(t, phrase, w)`` means one existing lesson has tag ``t`` and says ``phrase`` next to ``w``,
    which is exactly upstream's per-lesson condition."""

    def __init__(self, mode: ValidationMode = ValidationMode.OPENCODE) -> None:
        self.mode = mode
        self._counts: dict[tuple[str, str, str], int] = {}

    def features(self, lesson: str) -> tuple[list[str], Contexts]:
        return lesson_features(lesson, self.mode)

    def add(self, lesson: str, sign: int = 1) -> None:
        tags, contexts = self.features(lesson)
        for tag in tags:
            for phrase, words in contexts.items():
                for word in words:
                    key = (tag, phrase, word)
                    count = self._counts.get(key, 0) + sign
                    if count:
                        self._counts[key] = count
                    else:
                        self._counts.pop(key, None)

    def remove(self, lesson: str) -> None:
        self.add(lesson, -1)

    def contradicted(self, candidate: str) -> bool:
        tags, contexts = self.features(candidate)
        if not tags or not contexts:
            return False
        for a, b in NEGATION_PAIRS:
            for mine, theirs in ((a, b), (b, a)):
                words = contexts.get(mine)
                if words and any((t, theirs, w) in self._counts for t in tags for w in words):
                    return True
        return False


@lru_cache(maxsize=4096)
def _features(lesson: str, mode: ValidationMode) -> tuple[tuple[str, ...], Contexts]:
    return tuple(infer_tags(lesson)), negation_contexts(lesson, mode)


def lesson_features(lesson: str, mode: ValidationMode) -> tuple[list[str], Contexts]:
    """``(tags, negation contexts)`` of a lesson, cached: an add computes them to check the
    lesson and again when its entry joins the index (callers must not mutate the contexts)."""
    tags, contexts = _features(lesson, mode)
    return list(tags), contexts


def opposes_any(candidate: str, existing: Iterable[str], mode: ValidationMode) -> bool:
    """:func:`has_contradiction` with cached features (for the few lessons of a group)."""
    tags, mine = _features(candidate, mode)
    if not tags or not mine:
        return False
    for lesson in existing:
        their_tags, theirs = _features(lesson, mode)
        if set(tags) & set(their_tags) and opposed(mine, theirs):
            return True
    return False


def has_contradiction(
    candidate: str, existing: Iterable[str], mode: ValidationMode = ValidationMode.OPENCODE
) -> bool:
    """``detectContradiction`` as a plain scan (reference for :class:`ContradictionIndex`)."""
    tags = set(infer_tags(candidate))
    if not tags:
        return False
    mine = negation_contexts(candidate, mode)
    if not mine:
        return False
    return any(
        tags & set(infer_tags(lesson)) and opposed(mine, negation_contexts(lesson, mode))
        for lesson in existing
    )
