"""The naive pairwise scan: the exact answer the fast join must equal, and its baseline.

This is what opencode-swarm's ``findNearDuplicate`` and openknowledge's consolidation do for
every pair, with each lesson tokenised once. It is quadratic; use it on small inputs only.
"""

from __future__ import annotations

from collections.abc import Sequence

from swarmq.similarity.measure import Measure
from swarmq.similarity.text import jaccard, word_bigrams, word_tokens


def token_set(text: str, measure: Measure | str) -> frozenset[str]:
    """The token set of one lesson under ``measure`` (strings, as the reference builds them)."""
    return word_bigrams(text) if Measure(measure) is Measure.BIGRAMS else word_tokens(text)


def pairwise_join(
    texts: Sequence[str], threshold: float, measure: Measure | str = Measure.BIGRAMS
) -> list[tuple[int, int, float]]:
    """Every ``(i, j, similarity)`` with ``i < j`` and Jaccard ``>= threshold``, in order."""
    sets = [token_set(text, measure) for text in texts]
    pairs: list[tuple[int, int, float]] = []
    for i, left in enumerate(sets):
        for j in range(i + 1, len(sets)):
            similarity = jaccard(left, sets[j])
            if similarity >= threshold:
                pairs.append((i, j, similarity))
    return pairs
