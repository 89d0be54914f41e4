"""Duplicates across languages: a lesson and its translation.

The term and bigram passes compare ASCII words, so a Chinese lesson is to them only its residue
of identifiers and dates; the English embedding models place a rule and its translation far
apart. A multilingual model (:mod:`swarmq.similarity.multilingual`) proposes such pairs: every
pair with at least one lesson in a non-Latin script whose cosine reaches
``multilingual_threshold`` *and* whose two lessons are each other's nearest neighbour among all
the scope's lessons (mutual nearest neighbours, the criterion bitext mining uses: a cosine
alone does not separate a translation from a neighbouring rule on the same subject). The
planner's structural rules (same project, same kind, not kept apart, no contradiction) still
decide whether the pair merges, and the action records both the multilingual and the lexical
score.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import numpy as np

from swarmq.similarity.embedding import Embedder
from swarmq.similarity.script import non_latin

if TYPE_CHECKING:
    from swarmq.consolidation.config import ConsolidationConfig


def crosslingual_pairs(
    texts: Sequence[str],
    config: ConsolidationConfig,
    embedder: Callable[[], Embedder],
    groups: Sequence[str] | None = None,
    focus: Collection[int] | None = None,
) -> list[tuple[int, int, float]]:
    """``(i, j, cosine)`` with ``i < j`` of the mutual-nearest pairs at or above the threshold
    that involve a non-Latin lesson; nothing (and no model load) when every lesson is Latin.

    Neighbours are looked for among the lessons of the same ``groups`` key only (a project: the
    same rule copied into another project must not hide a lesson's translation in its own).
    With ``focus`` (indices into ``texts``: a night's new and changed lessons) only the pairs
    involving one of them: the same pairs, since a mutual pair is found from either side, so a
    focus lesson in English finds its old Chinese translation too. ``texts`` must still be the
    whole scope: a lesson's nearest neighbour is taken among all of them."""
    other = [i for i, text in enumerate(texts) if non_latin(text)]
    if not other or len(texts) < 2 or len(texts) > config.multilingual_max_entries:
        return []
    if focus is not None and not focus:
        return []
    vectors = embedder().embed(texts)
    keys = np.asarray(groups if groups is not None else [""] * len(texts), dtype=object)
    best: dict[int, tuple[int, float]] = {}

    def nearest(i: int) -> tuple[int, float]:
        if i not in best:
            row = vectors @ vectors[i]
            row[keys != keys[i]] = -np.inf
            row[i] = -np.inf
            j = int(np.argmax(row))
            best[i] = (j, float(row[j]))
        return best[i]

    found: dict[tuple[int, int], float] = {}
    wanted = set(other)
    for i in other if focus is None else sorted(set(focus)):
        j, cosine = nearest(i)
        if i not in wanted and j not in wanted:
            continue
        if cosine >= config.multilingual_threshold and nearest(j)[0] == i:
            found[(min(i, j), max(i, j))] = cosine
    return [(i, j, cosine) for (i, j), cosine in sorted(found.items())]
