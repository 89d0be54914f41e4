"""Paraphrased duplicates: same rule, different words.

Candidates come from the exact similarity join over each lesson's normalised *terms*
(:mod:`swarmq.similarity.normalize`) at ``paraphrase_candidate_threshold``; each candidate
is scored by the IDF-weighted cosine of its two term sets (IDF over the entries being
consolidated, so a word every lesson uses counts for little), computed for all candidates at
once in numpy. Templated entries and pairs the planner may not touch (different projects, kept
apart) are never candidates.

The embedding model proposes more: pairs whose lesson vectors have a cosine of at least
``dense_duplicate_threshold``, found by a blocked all-pairs product. Such a pair merges only when
its term cosine also reaches ``dense_lexical_floor`` (similarity of meaning alone never decides a
merge) and the planner's structural rules allow it; its action records both scores.

A lesson in a non-Latin script is to these passes only its ASCII residue (identifiers, dates),
so no pair with such a lesson is proposed by them; the cross-language pass
(:mod:`._crosslingual`) proposes those, by a multilingual model's mutual nearest neighbours.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from swarmq.consolidation._crosslingual import crosslingual_pairs
from swarmq.consolidation._mlvectors import PersistedVectors
from swarmq.similarity.embedding import Embedder
from swarmq.similarity.join import (
    FloatArray,
    JoinResult,
    cosine_join,
    idf_weights,
    weighted_overlaps,
)
from swarmq.similarity.measure import Measure
from swarmq.similarity.multilingual import available as multilingual_available
from swarmq.similarity.multilingual import multilingual_embedder
from swarmq.similarity.normalize import term_text
from swarmq.similarity.script import non_latin
from swarmq.similarity.sets import TokenSets, encode

if TYPE_CHECKING:
    from swarmq.consolidation.config import ConsolidationConfig
    from swarmq.consolidation.items import Item

Candidate = tuple[float, str, str, dict[str, float | str]]
Pair = tuple[str, str, float, float, float | None]
"""Two lesson texts, their IDF term cosine, term Jaccard, and dense cosine when the model
proposed them."""
DENSE_BLOCK = 4096


@functools.lru_cache(maxsize=262_144)
def _terms(text: str) -> str:
    """Cached across rounds: most lessons do not change between two rounds."""
    return term_text(text)


class Paraphrases:
    """The paraphrase pairs of one consolidation run, found once.

    A merge keeps one of its two lessons and a supersession changes none, so the lessons of a
    later round are a subset of the first round's: the pairs of lesson *texts* found in round 1
    stay the candidates of every later round, which only maps them to the entries now holding
    those texts. (IDF is the first round's population's.)
    """

    def __init__(
        self, config: ConsolidationConfig, embedder: Callable[[], Embedder] | None = None
    ) -> None:
        self.config = config
        self.embedder = embedder
        """Called only when the dense pass runs (the model loads on first use)."""
        self.multilingual: Callable[[], Embedder] | None = (
            multilingual_embedder if multilingual_available() else None
        )
        """The cross-language pass's model, when the ``multilingual`` extra is installed."""
        self.vector_file: Path | None = None
        """The store whose multilingual vectors are kept beside it (:mod:`._mlvectors`);
        ``None``: vectors cached in this process only."""
        self.multilingual_scores: dict[tuple[str, str], float] = {}
        """The multilingual cosine of each pair that pass proposed (by lesson texts)."""
        self.pairs: list[Pair] | None = None
        self._vectors: np.ndarray | None = None
        self._row: dict[str, int] = {}

    def dense_cosine(self, a: str, b: str) -> float | None:
        """The cosine of two hand-written lessons the dense pass embedded, else ``None``."""
        i, j = self._row.get(a), self._row.get(b)
        if self._vectors is None or i is None or j is None:
            return None
        return float(self._vectors[i] @ self._vectors[j])

    def _all_pairs(self, texts: list[str], groups: list[str] | None = None) -> list[Pair]:
        """The lexical and English-model pairs (:meth:`_find`, which subclasses narrow) without
        a non-Latin lesson, and the cross-language pass's pairs (``groups``: each text's project,
        where its neighbours are looked for)."""
        if len(texts) < 2:
            return []
        found = [pair for pair in self._find(texts) if not non_latin(pair[0]) | non_latin(pair[1])]
        if self.multilingual is not None and self.config.multilingual_duplicates:
            known = {(a, b) for a, b, *_ in found}
            for i, j, cosine in self._crosslingual(texts, groups, self.multilingual):
                a, b = texts[i], texts[j]
                if (a, b) not in known:
                    self.multilingual_scores[(a, b)] = cosine
                    found.append((a, b, cosine, 0.0, None))
        return found

    def _crosslingual(
        self, texts: list[str], groups: list[str] | None, model: Callable[[], Embedder]
    ) -> list[tuple[int, int, float]]:
        """The cross-language pass's pairs of ``texts`` (vectors from the store's file when
        there is one); narrowed to a focus by a night."""
        return crosslingual_pairs(texts, self.config, self._multilingual_vectors(model), groups)

    def _multilingual_vectors(self, model: Callable[[], Embedder]) -> Callable[[], Embedder]:
        path = self.vector_file
        if path is None:
            return model
        persisted = PersistedVectors(model, path)
        return lambda: persisted

    def _find(self, texts: list[str]) -> list[Pair]:
        sets = encode([_terms(text) for text in texts], Measure.TOKENS)
        weights = idf_weights(sets)
        result = self.join(sets, texts, weights)
        found: list[Pair] = []
        if len(result.left):
            cosines = weighted_overlaps(sets, result.left, result.right, weights)
            strong = np.flatnonzero(cosines >= self.config.paraphrase_threshold)
            found = [
                (
                    texts[int(result.left[k])],
                    texts[int(result.right[k])],
                    float(cosines[k]),
                    float(result.similarity[k]),
                    None,
                )
                for k in strong.tolist()
            ]
        config = self.config
        if self.embedder is None or not config.dense_duplicates:
            return found
        if len(texts) > config.dense_max_entries:
            return found
        vectors = self._vectors = self.embedder().embed(texts)
        row = self._row = {text: i for i, text in enumerate(texts)}
        found = [  # every merge records both scores: the term pairs get their cosine too
            (a, b, score, overlap, float(vectors[row[a]] @ vectors[row[b]]))
            for a, b, score, overlap, _ in found
        ]
        left, right, dense = self.dense_join(vectors, texts)
        if not len(left):
            return found
        known = {(a, b) for a, b, *_ in found}
        lexical = weighted_overlaps(sets, left, right, weights)
        for k in np.flatnonzero(lexical >= config.dense_lexical_floor).tolist():
            a, b = texts[int(left[k])], texts[int(right[k])]
            if (a, b) not in known:
                found.append((a, b, float(lexical[k]), 0.0, float(dense[k])))
        return found

    @staticmethod
    def _term_jaccard(a: str, b: str) -> float:
        """The Jaccard of two lessons' term sets, for the record."""
        left, right = set(_terms(a).split()), set(_terms(b).split())
        return len(left & right) / len(left | right) if left | right else 0.0

    def join(
        self, sets: TokenSets, texts: list[str], weights: FloatArray | None = None
    ) -> JoinResult:
        """The candidate pairs among ``texts`` (encoded as ``sets``, IDF ``weights``): every
        pair at term Jaccard ``>= paraphrase_candidate_threshold`` whose IDF cosine reaches
        ``paraphrase_threshold`` (within rounding), which are all the pairs :meth:`_find` keeps.

        Not the plain self-join at the Jaccard threshold: its 0.3 pairs grow with the square of
        a store (29 million at 500,000 lessons). :func:`~swarmq.similarity.join.cosine_join`
        pairs only prefix tokens whose remaining weights can still reach the cosine on both
        sides, so the pairs it handles are about those kept."""
        if weights is None:
            weights = idf_weights(sets)
        floor = self.config.paraphrase_threshold - 1e-9  # the caller decides; rounding kept
        return cosine_join(sets, weights, floor, self.config.paraphrase_candidate_threshold)

    def dense_join(
        self, vectors: np.ndarray, texts: list[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dense candidate pairs among ``texts`` (embedded as ``vectors``)."""
        return dense_pairs(vectors, self.config.dense_duplicate_threshold)

    def candidates(self, items: Sequence[Item], seen: set[tuple[str, str]]) -> list[Candidate]:
        """``(cosine, id, id, score breakdown)`` of every comparable pair of ``items`` at or
        above ``paraphrase_threshold`` that the word-bigram pass did not already judge: a pair
        whose bigrams it compared (a complement, say, with the same wording and other facts) is
        never overruled by a similarity of meaning."""
        from swarmq.consolidation.items import comparable

        if self.config.paraphrase_threshold >= 1.0:
            return []
        by_text: dict[str, list[Item]] = {}
        for item in items:
            if item.template is None:
                by_text.setdefault(item.text, []).append(item)
        if self.pairs is None:
            projects = [{i.project or "" for i in group} for group in by_text.values()]
            self.pairs = self._all_pairs(
                list(by_text), [p.pop() if len(p) == 1 else "" for p in projects]
            )
        found: list[Candidate] = []
        for left, right, score, overlap, dense in self.pairs:
            for a in by_text.get(left, ()):
                for b in by_text.get(right, ()):
                    key = (min(a.id, b.id), max(a.id, b.id))
                    if a.id == b.id or key in seen or not comparable(a, b):
                        continue
                    why: dict[str, float | str] = {
                        "idf_cosine": round(score, 4),
                        "term_jaccard": round(overlap, 4),
                    }
                    if dense is not None:
                        why["dense_cosine"] = round(dense, 4)
                    multilingual = self.multilingual_scores.get((left, right))
                    if multilingual is not None:  # proposed by meaning across languages
                        why = {
                            "multilingual_cosine": round(multilingual, 4),
                            "term_jaccard": round(self._term_jaccard(left, right), 4),
                        }
                    found.append((score, key[0], key[1], why))
        return found


def dense_pairs(vectors: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(left, right, cosine)`` of every pair ``left < right`` of unit ``vectors`` at or
    above ``threshold``, in blocks so memory stays at DENSE_BLOCK² floats."""
    lefts, rights, scores = [], [], []
    n = len(vectors)
    for lo in range(0, n, DENSE_BLOCK):
        block = vectors[lo : lo + DENSE_BLOCK]
        for co in range(lo, n, DENSE_BLOCK):
            products = block @ vectors[co : co + DENSE_BLOCK].T
            i, j = np.nonzero(products >= threshold)
            i, j = i + lo, j + co
            keep = i < j
            lefts.append(i[keep])
            rights.append(j[keep])
            scores.append(products[i[keep] - lo, j[keep] - co])
    if not lefts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32)
    return (
        np.concatenate(lefts).astype(np.int64),
        np.concatenate(rights).astype(np.int64),
        np.concatenate(scores),
    )
