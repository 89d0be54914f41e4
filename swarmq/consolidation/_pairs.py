"""Which pairs a consolidation round considers, found incrementally across rounds.

Only pairs the planner may act on are proposed: hand-written entries among themselves and
templated ones within their own template key (:func:`~.items.comparable` refuses every other
pair for its structure). Templated notes of one kind share most of their wording, so joined with
each other a store's co-change notes form a clique of millions of pairs, none of them comparable;
proposing them was the largest part of a big store's join, in time and memory.

A round's lessons are the previous round's minus the entries merged away or archived, with the
lessons a merge changed: a pair of two entries whose lessons did not change keeps its
similarity, so only the entries that changed (or are new to the population or the focus) are
joined again, against the whole population, and the previous round's other pairs are carried.
The full pass and a night (restricted to a focus of changed entries) share this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from swarmq.consolidation.items import Item
from swarmq.similarity.join import FloatArray, focused_join, similarity_join
from swarmq.similarity.sets import IntArray, TokenSets


def comparable_join(
    sets: TokenSets, probe: IntArray, threshold: float, items: Sequence[Item]
) -> tuple[IntArray, IntArray, FloatArray]:
    """The exact join's pairs of ``items`` (encoded as ``sets``) with an entry of ``probe``,
    less those :func:`~.items.comparable` refuses for their structure, sorted by
    ``(left, right)``. A template group whose every entry probes is self-joined
    (:func:`~swarmq.similarity.join.similarity_join`, the same pairs and similarities as the
    focused join of all its rows, cheaper)."""
    groups: dict[str | None, list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault(item.template, []).append(k)
    chosen = np.zeros(len(items), dtype=bool)
    chosen[probe] = True
    lefts, rights, scores = [], [], []
    for members in groups.values():
        rows = np.asarray(members, dtype=np.int64)
        if len(rows) < 2 or not chosen[rows].any():
            continue
        group = sets if len(rows) == len(items) else sets.take(rows)
        probed = np.flatnonzero(chosen[rows])
        if len(probed) == len(rows):
            found = similarity_join(group, threshold)
        else:
            found = focused_join(group, probed, threshold)
        lefts.append(rows[found.left])  # rows ascend: left < right stays so
        rights.append(rows[found.right])
        scores.append(found.similarity)
    if not lefts:
        none = np.zeros(0, dtype=np.int64)
        return none, none, np.zeros(0, dtype=np.float64)
    left, right = np.concatenate(lefts), np.concatenate(rights)
    order = np.lexsort((right, left))
    return left[order], right[order], np.concatenate(scores)[order]


def every_pair(
    sets: TokenSets, threshold: float, items: Sequence[Item]
) -> tuple[IntArray, IntArray, FloatArray]:
    """:func:`comparable_join` with every entry probing: all the comparable pairs."""
    return comparable_join(sets, np.arange(len(items), dtype=np.int64), threshold, items)


@dataclass(frozen=True, slots=True)
class RoundPairs:
    """What a round joined: the population's lessons, the focus (``None``: every entry), and
    the pairs found (by id)."""

    threshold: float
    texts: dict[str, str]
    focus: frozenset[str] | None
    pairs: list[tuple[str, str, float]]


def round_pairs(
    previous: RoundPairs | None,
    sets: TokenSets,
    threshold: float,
    items: Sequence[Item],
    focus: set[str] | None = None,
) -> tuple[list[tuple[int, int, float]], RoundPairs]:
    """The comparable pairs of ``items`` (encoded as ``sets``) with Jaccard ``>= threshold``
    and an entry of ``focus`` (``None``: any pair): exactly :func:`comparable_join`'s, joining
    only what is new since ``previous``.

    A pair of this round is a pair of two *stable* entries (in the previous round's population
    with the same lesson) or one with an entry that is not. A pair of two stable entries with
    one in the previous focus was the previous round's (same lessons, same similarity; the
    focus only grows); one whose focus member entered the focus since is found by joining that
    member. So only the entries that are not stable, and the stable ones new to the focus, are
    joined against the population; of their pairs those with a focus entry are kept."""
    ids = [item.id for item in items]
    texts = {item.id: item.text for item in items}
    if previous is None or previous.threshold != threshold:
        if focus is None:
            probe = list(range(len(ids)))
        else:
            probe = [k for k, entry_id in enumerate(ids) if entry_id in focus]
        carried: list[tuple[str, str, float]] = []
    else:
        known, before = previous.texts, previous.focus
        stable = {i for i, text in texts.items() if known.get(i) == text}
        probe = [
            k
            for k, entry_id in enumerate(ids)
            if entry_id not in stable
            or (
                focus is not None
                and entry_id in focus
                and before is not None
                and entry_id not in before
            )
        ]
        joined = {ids[k] for k in probe}
        carried = [
            (a, b, s)
            for a, b, s in previous.pairs
            if a in stable and b in stable and a not in joined and b not in joined
        ]
    left, right, similarity = comparable_join(
        sets, np.asarray(probe, dtype=np.int64), threshold, items
    )
    pairs = carried + [
        (ids[i], ids[j], s)
        for i, j, s in zip(left.tolist(), right.tolist(), similarity.tolist(), strict=True)
        if focus is None or ids[i] in focus or ids[j] in focus
    ]
    at = {entry_id: k for k, entry_id in enumerate(ids)}
    found = [(min(at[a], at[b]), max(at[a], at[b]), s) for a, b, s in pairs]
    kept = None if focus is None else frozenset(focus)
    return found, RoundPairs(threshold, texts, kept, pairs)
