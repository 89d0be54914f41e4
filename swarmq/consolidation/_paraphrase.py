"""Paraphrased duplicates: same rule, different words.

Candidates come from the exact similarity join over each lesson's normalised *terms*
(:mod:`swarmq.similarity.normalize`) at ``paraphrase_candidate_threshold``; each candidate
is scored by the IDF-weighted cosine of its two term sets (IDF over the entries being
consolidated, so a word every lesson uses counts for little), computed for all candidates at
once in numpy. Templated entries and pairs the planner may not touch (different projects, kept
apart) are never candidates.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from swarmq.similarity.join import similarity_join, weighted_overlaps
from swarmq.similarity.measure import Measure
from swarmq.similarity.normalize import term_text
from swarmq.similarity.sets import TokenSets, encode

if TYPE_CHECKING:
    from swarmq.consolidation.config import ConsolidationConfig
    from swarmq.consolidation.items import Item

Candidate = tuple[float, str, str, dict[str, float | str]]


@functools.lru_cache(maxsize=262_144)
def _terms(text: str) -> str:
    """Cached across rounds: most lessons do not change between two rounds."""
    return term_text(text)


def idf_weights(sets: TokenSets) -> np.ndarray:
    """Per member of ``sets.tokens``: smoothed IDF of its token over the sets, divided by the
    set's L2 norm, so the weighted overlap of two sets is their cosine."""
    n = len(sets)
    df = np.bincount(sets.tokens, minlength=max(sets.vocabulary, 1))
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    member = idf[sets.tokens]
    owner = np.repeat(np.arange(n, dtype=np.int64), sets.sizes)
    norms = np.sqrt(np.bincount(owner, weights=member * member, minlength=n))
    weights: np.ndarray = member / np.maximum(norms[owner], 1e-12)
    return weights


class Paraphrases:
    """The paraphrase pairs of one consolidation run, found once.

    A merge keeps one of its two lessons and a supersession changes none, so the lessons of a
    later round are a subset of the first round's: the pairs of lesson *texts* found in round 1
    stay the candidates of every later round, which only maps them to the entries now holding
    those texts. (IDF is the first round's population's.)
    """

    def __init__(self, config: ConsolidationConfig) -> None:
        self.config = config
        self.pairs: list[tuple[str, str, float, float]] | None = None

    def _find(self, texts: list[str]) -> list[tuple[str, str, float, float]]:
        if len(texts) < 2:
            return []
        sets = encode([_terms(text) for text in texts], Measure.TOKENS)
        result = similarity_join(sets, self.config.paraphrase_candidate_threshold)
        if not len(result.left):
            return []
        cosines = weighted_overlaps(sets, result.left, result.right, idf_weights(sets))
        strong = np.flatnonzero(cosines >= self.config.paraphrase_threshold)
        return [
            (
                texts[int(result.left[k])],
                texts[int(result.right[k])],
                float(cosines[k]),
                float(result.similarity[k]),
            )
            for k in strong.tolist()
        ]

    def candidates(self, items: Sequence[Item], seen: set[tuple[str, str]]) -> list[Candidate]:
        """``(cosine, id, id, score breakdown)`` of every comparable pair of ``items`` at or
        above ``paraphrase_threshold`` that the word-bigram pass did not already judge."""
        from swarmq.consolidation.items import comparable

        if self.config.paraphrase_threshold >= 1.0:
            return []
        by_text: dict[str, list[Item]] = {}
        for item in items:
            if item.template is None:
                by_text.setdefault(item.text, []).append(item)
        if self.pairs is None:
            self.pairs = self._find(list(by_text))
        found: list[Candidate] = []
        for left, right, score, overlap in self.pairs:
            for a in by_text.get(left, ()):
                for b in by_text.get(right, ()):
                    key = (min(a.id, b.id), max(a.id, b.id))
                    if a.id == b.id or key in seen or not comparable(a, b):
                        continue
                    found.append(
                        (
                            score,
                            key[0],
                            key[1],
                            {"idf_cosine": round(score, 4), "term_jaccard": round(overlap, 4)},
                        )
                    )
        return found
