"""A consolidation run restricted to the entries changed since the last successful run.

The last run left the store at a fixpoint: no pair of its entries called for an action. So the
pairs that can call for one tonight involve an entry added or changed since (see
:mod:`._watermark` for how those are known), and the planner joins only those against the whole
store (:func:`~swarmq.similarity.join.focused_join`), finding exactly the full join's pairs that
involve them (the dense paraphrase proposals likewise: the focus lessons' vectors against
every lesson's). An entry a merge changes joins the focus for the later rounds, so the rounds
still run to a fixpoint. A later round joins only what is new to it (:func:`~._pairs.round_pairs`): a pair
of two entries whose lessons did not change keeps its similarity, so the previous round's pairs
between such entries are still this round's, and only the entries that entered the focus or the
population, or whose lesson changed, are joined against the population. Every join pairs
hand-written entries among themselves and templated ones within their template key, the only
pairs the planner may act on (:func:`~._pairs.comparable_join`). Complement links need each end's whole
partner list (an entry keeps only its most similar partners): the link join takes the focus and
every entry that pairs with it, and only links touching the focus are decided.

What a full pass may find that this does not: pairs of two unchanged entries whose verdict
changed although neither did (the paraphrase IDF drifts as the store grows), and pairs a run
left undone when it hit ``max_rounds``. ``swarmq consolidate --full`` (or
``consolidation.incremental: false``) runs the full pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from swarmq.consolidation._crosslingual import crosslingual_pairs
from swarmq.consolidation._pairs import comparable_join, round_pairs
from swarmq.consolidation._paraphrase import Candidate, Paraphrases
from swarmq.consolidation._plan import Planner
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Action, Contradicts, Item, Population
from swarmq.similarity.embedding import Embedder
from swarmq.similarity.join import FloatArray, JoinResult, focused_join
from swarmq.similarity.measure import Measure
from swarmq.similarity.sets import IntArray, TokenSets


class FocusedPlanner(Planner):
    """The planner, joining only the focus (changed entries, then what merges changed)."""

    def __init__(
        self,
        config: ConsolidationConfig,
        measure: Measure,
        contradicts: Contradicts | None,
        focus: Iterable[str],
        embedder: Callable[[], Embedder] | None = None,
    ) -> None:
        super().__init__(config, measure, contradicts)
        self.focus: set[str] = set(focus)
        self.paraphrases = _FocusedParaphrases(config, self.focus, embedder)

    def _indices(self, items: Sequence[Item]) -> IntArray:
        return np.asarray(
            [k for k, item in enumerate(items) if item.id in self.focus], dtype=np.int64
        )

    def decide_round(
        self, items: Sequence[Item], round_no: int, population: Population
    ) -> list[Action]:
        actions = super().decide_round(items, round_no, population)
        for action in actions:
            self.focus.update((action.keep, action.other))
        return actions

    def round_pairs(
        self, sets: TokenSets, threshold: float, items: Sequence[Item]
    ) -> list[tuple[int, int, float]]:
        found, self._rounds = round_pairs(self._rounds, sets, threshold, items, self.focus)
        return found

    def link_join(self, sets: TokenSets, items: Sequence[Item]) -> JoinResult:
        t = self.config.complement_threshold
        focus = self._indices(items)
        left, right, _ = comparable_join(sets, focus, t, items)
        reach = np.union1d(np.union1d(left, right), focus)
        left, right, similarity = comparable_join(sets, reach, t, items)
        return JoinResult(left, right, similarity, np.zeros(0, dtype=np.int64), t)

    def in_scope(self, a: Item, b: Item) -> bool:
        return a.id in self.focus or b.id in self.focus


class _FocusedParaphrases(Paraphrases):
    """Paraphrase candidates of the focus entries' lessons only (found in the first round, as
    the full pass does: later rounds only ever hold lessons of the first)."""

    def __init__(
        self,
        config: ConsolidationConfig,
        focus: set[str],
        embedder: Callable[[], Embedder] | None,
    ) -> None:
        super().__init__(config, embedder)
        self.focus = focus
        self.focus_texts: set[str] = set()

    def candidates(self, items: Sequence[Item], seen: set[tuple[str, str]]) -> list[Candidate]:
        if self.pairs is None:
            self.focus_texts = {item.text for item in items if item.id in self.focus}
        return super().candidates(items, seen)

    def _crosslingual(
        self, texts: list[str], groups: list[str] | None, model: Callable[[], Embedder]
    ) -> list[tuple[int, int, float]]:
        """The full pass's cross-language pairs that involve a focus lesson: ``texts`` is the
        whole scope here (the store is loaded), read from the vector file beside the store, so a
        night embeds only its new lessons."""
        focus = [k for k, text in enumerate(texts) if text in self.focus_texts]
        return crosslingual_pairs(
            texts, self.config, self._multilingual_vectors(model), groups, focus
        )

    def join(
        self, sets: TokenSets, texts: list[str], weights: FloatArray | None = None
    ) -> JoinResult:
        chosen = [k for k, text in enumerate(texts) if text in self.focus_texts]
        return focused_join(
            sets, np.asarray(chosen, dtype=np.int64), self.config.paraphrase_candidate_threshold
        )

    def dense_join(
        self, vectors: np.ndarray, texts: list[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The focus lessons' rows against every lesson, ``left < right`` as the full pass."""
        chosen = np.asarray(
            [k for k, text in enumerate(texts) if text in self.focus_texts], dtype=np.int64
        )
        if not len(chosen):
            none = np.zeros(0, dtype=np.int64)
            return none, none, np.zeros(0, dtype=np.float32)
        products = vectors[chosen] @ vectors.T
        row, col = np.nonzero(products >= self.config.dense_duplicate_threshold)
        score = products[row, col]
        a, b = chosen[row], col.astype(np.int64)
        keep = a != b
        a, b, score = a[keep], b[keep], score[keep]
        left, right = np.minimum(a, b), np.maximum(a, b)
        keys, first = np.unique(left * len(texts) + right, return_index=True)
        return keys // len(texts), keys % len(texts), score[first]
