"""All pairs of lessons whose Jaccard similarity reaches a threshold, without the quadratic scan.

An exact set-similarity join: AllPairs prefix filtering (Bayardo et al., WWW 2007) with a
bitmap filter (Sandes et al., SIGMOD 2020), written as whole-array numpy passes instead of a
per-lesson Python loop, followed by exact verification.

1. Tokens are ranked rarest first (:mod:`.sets`), each set sorted by rank, and lessons ordered by
   size. ``J(x, y) >= t`` needs an overlap of at least ``ceil(t |x|)``, so the first shared token
   lies in the *probe prefix* of ``x`` (its first ``|x| - ceil(t |x|) + 1`` tokens); when
   ``|y| <= |x|`` the overlap also reaches ``2t/(1+t) |y|``, so it lies in the shorter *index
   prefix* of ``y``. Only prefix occurrences are ever paired.
2. One sort groups the prefix occurrences by token and, inside a group, by lesson size. The
   partners of an indexed occurrence are then a contiguous slice of its group, cut at
   ``|x| <= |y| / t`` by a ``searchsorted`` (the *length filter*); slices are expanded in chunks so
   memory stays bounded.
3. The *bitmap filter* bounds each raw candidate from two hashed bit images of the sets: tokens in
   ``x`` whose bit is absent from ``y``'s image are certainly not shared, so
   ``overlap <= (|x| + |y| - popcount(bits(x) ^ bits(y))) / 2``. A cheap 64-bit image prunes about
   98 % of the raw candidates, a 256-bit one most of the rest.
4. Survivors are de-duplicated and *verified exactly* on the full sets; the Jaccard value is
   ``overlap / (|x| + |y| - overlap)`` in float64, the division the brute force does, so the
   result equals the pairwise scan bit for bit.

Empty sets (one-word lessons, and Chinese-only lessons under opencode-swarm's ASCII
normalisation) have Jaccard 1.0 with each other by the reference's rule and 0.0 with everything
else: they form one clique, reported as such instead of being joined pairwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from swarmq.similarity.measure import Measure
from swarmq.similarity.sets import IntArray, TokenSets, encode

FloatArray = npt.NDArray[np.float64]
WordArray = npt.NDArray[np.uint64]
OwnerArray = npt.NDArray[np.int32] | npt.NDArray[np.int64]

_EPS = 1e-9
"""Slack in the float filter bounds: a bound is only ever loosened by it, so no pair is lost."""

CHUNK = 2_000_000
"""Raw candidates expanded at once: bounds the join's working memory to about 100 MiB."""

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True, slots=True)
class JoinResult:
    """Every pair ``left[k] < right[k]`` with ``similarity[k] >= threshold``, plus the empty clique.

    Pairs are sorted by ``(left, right)``. ``empty`` lists the lessons whose token set is empty:
    every two of them are similar with 1.0, kept implicit so that a store with thousands of
    one-word lessons does not materialise millions of pairs unless :meth:`arrays` is asked to.
    """

    left: IntArray
    right: IntArray
    similarity: FloatArray
    empty: IntArray
    threshold: float

    def __len__(self) -> int:
        k = len(self.empty)
        return len(self.left) + k * (k - 1) // 2

    def arrays(self) -> tuple[IntArray, IntArray, FloatArray]:
        """All pairs including the empty clique, sorted by ``(left, right)``."""
        k = len(self.empty)
        if k < 2:
            return self.left, self.right, self.similarity
        a, b = np.triu_indices(k, 1)
        left = np.concatenate([self.left, self.empty[a]])
        right = np.concatenate([self.right, self.empty[b]])
        similarity = np.concatenate([self.similarity, np.ones(len(a))])
        order = np.lexsort((right, left))
        return left[order], right[order], similarity[order]

    def pairs(self) -> Iterator[tuple[int, int, float]]:
        left, right, similarity = self.arrays()
        return zip(left.tolist(), right.tolist(), similarity.tolist(), strict=True)


@dataclass(frozen=True, slots=True)
class JoinStats:
    """How much each stage pruned (for the benchmark and for tuning)."""

    prefix_occurrences: int
    raw_candidates: int
    after_bitmap64: int
    after_bitmap256: int
    verified: int


def _min_overlap(t: float, sizes: IntArray) -> IntArray:
    """``ceil(t * size)``, never over-estimated through float error, at least 1."""
    bound: IntArray = np.maximum(np.ceil(t * sizes - _EPS), 1).astype(np.int64)
    return bound


def _bit_images(sets: TokenSets, bits: int) -> list[WordArray]:
    """Each set hashed into ``bits`` bits, as ``bits // 64`` word columns (one array per word).
    Built a chunk of sets at a time: a store's members are tens of millions, and four
    member-long temporaries of them would be the join's largest allocation."""
    words = bits // 64
    n = len(sets)
    sizes = sets.sizes
    shift = np.uint64(64 - (bits.bit_length() - 1))
    image = np.zeros(n * words, dtype=np.uint64)
    step = max(1, CHUNK // max(int(sizes.max()) if n else 1, 1))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        owner = np.repeat(np.arange(lo, hi, dtype=np.int64), sizes[lo:hi])
        mixed = sets.tokens[sets.offsets[lo] : sets.offsets[hi]].astype(np.uint64) * _GOLDEN
        bit = (mixed >> shift).astype(np.int64)
        del mixed
        values = np.left_shift(np.uint64(1), (bit & 63).astype(np.uint64))
        np.bitwise_or.at(image, owner * words + (bit >> 6), values)
    columns = image.reshape(n, words)
    return [np.ascontiguousarray(columns[:, w]) for w in range(words)]


def _xor_bits(images: list[WordArray], a: IntArray, b: IntArray) -> IntArray:
    total = np.zeros(len(a), dtype=np.int64)
    for column in images:
        total += np.bitwise_count(column[a] ^ column[b])
    return total


class _PrefixIndex:
    """Prefix occurrences grouped by token, with each indexed occurrence's partner slice."""

    def __init__(self, sets: TokenSets, t: float) -> None:
        sizes = sets.sizes
        n = len(sizes)
        self.n = n
        nonempty = sizes > 0
        order = np.lexsort((np.arange(n), sizes))  # by (size, index)
        rank_of = np.empty(n, dtype=np.int64)
        rank_of[order] = np.arange(n, dtype=np.int64)
        probe_len = np.where(nonempty, sizes - _min_overlap(t, sizes) + 1, 0)
        index_len = np.where(nonempty, sizes - _min_overlap(2 * t / (1 + t), sizes) + 1, 0)

        owner = np.repeat(np.arange(n, dtype=np.int64), sizes)
        position = np.arange(len(sets.tokens), dtype=np.int64) - np.repeat(sets.offsets[:-1], sizes)
        keep = position < probe_len[owner]
        token, owner, position = sets.tokens[keep], owner[keep], position[keep]

        max_size = int(sizes.max()) if n else 0
        width = max_size + 1
        if (sets.vocabulary + 1) * n * width < 2**62:
            key = (token * n + rank_of[owner]) * width + position
            key.sort()  # one int64 sort instead of a three-key lexsort
            position = key % width
            owner = order[(key // width) % n]
            token = key // (width * n)
            del key
        else:  # pragma: no cover - a vocabulary of billions
            by = np.lexsort((position, rank_of[owner], token))
            token, owner, position = token[by], owner[by], position[by]
        size = sizes[owner]

        # Partners of occurrence k: the later occurrences of its token up to size |y| / t.
        group_key = token * (max_size + 2) + size
        longest = np.minimum(np.floor(size / t + _EPS).astype(np.int64), max_size)
        hi = np.searchsorted(group_key, token * (max_size + 2) + longest, side="right")
        here = np.arange(len(hi), dtype=np.int64)
        count = np.where(position < index_len[owner], hi - here - 1, 0)
        count[count < 0] = 0
        start = np.cumsum(count) - count

        self.owner = owner
        self.size = size
        self.count = count
        self.start = start
        self.base = here + 1 - start
        """Global candidate number g of occurrence k pairs k with occurrence ``g + base[k]``."""
        self.total = int(count.sum())

    def chunks(self, chunk: int) -> Iterator[tuple[int, int]]:
        """Occurrence ranges expanding to about ``chunk`` raw candidates each."""
        bounds = np.searchsorted(self.start, np.arange(0, self.total + chunk, chunk), side="left")
        edges = np.unique(np.append(bounds, len(self.count)))
        yield from zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)


def similarity_join(
    sets: TokenSets, threshold: float, *, stats: list[JoinStats] | None = None
) -> JoinResult:
    """All pairs of ``sets`` with Jaccard ``>= threshold`` (``0 < threshold <= 1``)."""
    if math.isnan(threshold) or not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    t = float(threshold)
    sizes = sets.sizes
    empty = np.flatnonzero(sizes == 0)
    none = np.empty(0, dtype=np.int64)
    if len(sizes) - len(empty) < 2:
        return _verified(sets, none, none, empty, t)

    index = _PrefixIndex(sets, t)
    n = index.n
    ratio = t / (1 + t)
    total = np.arange(2 * int(sizes.max()) + 1, dtype=np.int64)
    # overlap <= (|x| + |y| - xor) / 2 must reach ceil(t/(1+t) (|x| + |y|)):
    limit = (total - 2 * np.ceil(ratio * total - _EPS)).astype(np.int32)
    coarse = _bit_images(sets, 64)
    fine = _bit_images(sets, 256)
    kept: list[IntArray] = []
    after64 = 0
    # Per-occurrence copies, so the hot loop reads partners from contiguous group slices.
    occ_size = index.size.astype(np.int32)
    occ_image = coarse[0][index.owner]
    for lo, hi in index.chunks(CHUNK):
        c = index.count[lo:hi]
        m = int(c.sum())
        if m == 0:
            continue
        local = np.arange(m, dtype=np.int64)
        local += np.repeat(index.base[lo:hi] + int(index.start[lo]), c)
        partner = local  # occurrence index of each raw candidate's partner
        lim = limit[np.repeat(occ_size[lo:hi], c) + occ_size[partner]]
        ok = np.bitwise_count(np.repeat(occ_image[lo:hi], c) ^ occ_image[partner]) <= lim
        a = np.repeat(index.owner[lo:hi], c)[ok]
        b = index.owner[partner[ok]]
        lim = lim[ok]
        del local, partner, ok
        after64 += len(a)
        ok = _xor_bits(fine, a, b) <= lim
        a, b = a[ok], b[ok]
        kept.append(np.minimum(a, b) * n + np.maximum(a, b))
    keys = np.sort(np.concatenate(kept)) if kept else none
    if len(keys):
        first = np.ones(len(keys), dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        deduped = keys[first]
    else:
        deduped = keys
    result = _verified(sets, deduped // n, deduped % n, empty, t)
    if stats is not None:
        stats.append(JoinStats(len(index.owner), index.total, after64, len(keys), len(deduped)))
    return result


def _universe(sets: TokenSets) -> IntArray:
    """Every member as ``lesson * vocabulary + rank``: sorted (by lesson, then by rank)."""
    owner = np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes)
    universe: IntArray = owner * max(sets.vocabulary, 1) + sets.tokens
    return universe


def _members(starts: IntArray, counts: IntArray) -> IntArray:
    """``starts[k] .. starts[k] + counts[k] - 1`` for every ``k``, concatenated."""
    total = int(counts.sum())
    out: IntArray = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    out += np.arange(total, dtype=np.int64)
    return out


def _shared_members(
    sets: TokenSets, a: IntArray, b: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """The tokens pairs ``(a[k], b[k])`` share, as ``(k, member in a[k], member in b[k])``
    (positions into ``sets.tokens``), in ascending token order within each pair: both sets'
    members keyed by ``(k, token)`` and sorted, a shared token being two equal adjacent keys
    (a set holds a token once). Needs no store-wide array, unlike a search in :func:`_universe`."""
    sizes = sets.sizes
    vocabulary = max(sets.vocabulary, 1)
    ca, cb = sizes[a], sizes[b]
    k = np.arange(len(a), dtype=np.int64)
    pair = np.concatenate([np.repeat(k, ca), np.repeat(k, cb)])
    position = np.concatenate([_members(sets.offsets[a], ca), _members(sets.offsets[b], cb)])
    key = pair * vocabulary + sets.tokens[position]
    order = np.argsort(key, kind="stable")  # a's member first among two equal keys
    key = key[order]
    twin = np.flatnonzero(key[1:] == key[:-1])
    return pair[order[twin]], position[order[twin]], position[order[twin + 1]]


def _pair_overlaps(sets: TokenSets, left: IntArray, right: IntArray) -> IntArray:
    """``|set(left[k]) & set(right[k])|`` by :func:`_shared_members`, in chunks."""
    result = np.zeros(len(left), dtype=np.int64)
    step = max(1, CHUNK // max(2 * int(sets.sizes.max()) if len(sets) else 1, 1))
    for lo in range(0, len(left), step):
        pair, _, _ = _shared_members(sets, left[lo : lo + step], right[lo : lo + step])
        result[lo : lo + step] = np.bincount(pair, minlength=len(left[lo : lo + step]))
    return result


def _overlaps(
    sets: TokenSets, left: IntArray, right: IntArray, universe: IntArray | None = None
) -> IntArray:
    """``|set(left[k]) & set(right[k])|``: the smaller set's tokens binary-searched in the other."""
    vocabulary = max(sets.vocabulary, 1)
    sizes = sets.sizes
    if universe is None:
        universe = _universe(sets)
    result = np.zeros(len(left), dtype=np.int64)
    step = max(1, CHUNK // max(int(sizes.max()), 1))
    for lo in range(0, len(left), step):
        a, b = left[lo : lo + step], right[lo : lo + step]
        swap = sizes[a] > sizes[b]
        small, large = np.where(swap, b, a), np.where(swap, a, b)
        counts = sizes[small]
        pair = np.repeat(np.arange(len(small), dtype=np.int64), counts)
        within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        queries = large[pair] * vocabulary + sets.tokens[sets.offsets[small][pair] + within]
        found = np.minimum(np.searchsorted(universe, queries), len(universe) - 1)
        hits = (universe[found] == queries).astype(np.int64)
        result[lo : lo + step] = np.bincount(pair, weights=hits, minlength=len(small))
    return result


def weighted_overlaps(
    sets: TokenSets, left: IntArray, right: IntArray, weights: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``sum(w[left[k], t] * w[right[k], t])`` over the tokens ``t`` the two sets share, where
    ``weights`` is aligned with ``sets.tokens`` (with L2-normalised IDF weights: the cosine),
    summed in ascending token order."""
    result = np.zeros(len(left), dtype=np.float64)
    step = max(1, CHUNK // max(2 * int(sets.sizes.max()) if len(sets) else 1, 1))
    for lo in range(0, len(left), step):
        a, b = left[lo : lo + step], right[lo : lo + step]
        pair, in_a, in_b = _shared_members(sets, a, b)
        products = weights[in_a] * weights[in_b]
        result[lo : lo + step] = np.bincount(pair, weights=products, minlength=len(a))
    return result


def owner_kind(n: int) -> type[np.int32] | type[np.int64]:
    """The narrowest of int32 and int64 that numbers ``n`` sets."""
    return np.int32 if n < 2**31 else np.int64


def _owners(sizes: IntArray) -> OwnerArray:
    """Each member's set number (32-bit when it fits: a store has tens of millions)."""
    return cast(OwnerArray, np.repeat(np.arange(len(sizes), dtype=owner_kind(len(sizes))), sizes))


def idf_weights(sets: TokenSets) -> npt.NDArray[np.float64]:
    """Per member of ``sets.tokens``: smoothed IDF of its token over the sets, divided by the
    set's L2 norm, so the weighted overlap of two sets is their cosine."""
    n = len(sets)
    df = np.bincount(sets.tokens, minlength=max(sets.vocabulary, 1))
    idf = np.log((1.0 + n) / (1.0 + df))
    idf += 1.0
    weights: npt.NDArray[np.float64] = idf[sets.tokens]
    del idf, df
    square = weights * weights
    norms = np.sqrt(np.bincount(_owners(sets.sizes), weights=square, minlength=n))
    del square
    weights /= np.repeat(np.maximum(norms, 1e-12), sets.sizes)
    return weights


def cosine_prefix(sets: TokenSets, weights: npt.NDArray[np.float64], threshold: float) -> IntArray:
    """Per set, how many of its first tokens (rarest first) can be the first token it shares
    with a set at weighted cosine ``>= threshold`` (``weights`` as :func:`weighted_overlaps`
    takes them, each set's L2-normalised): a token whose set's remaining weights, itself
    included, have a norm below ``threshold`` cannot, since every shared token lies at or
    after the first one in both sets and the cosine is at most that norm times the other's
    (at most 1; Cauchy-Schwarz, as AllPairs bounds it). Both sides' prefixes then hold the
    first shared token, so the join need only pair prefixes. Summed one position of every set
    at a time (sets are short), so each set's sums are its own and no member-long temporary
    is made."""
    sizes = sets.sizes
    n = len(sizes)
    starts = sets.offsets[:-1]
    longest = int(sizes.max()) if n else 0
    total = np.zeros(n, dtype=np.float64)
    for p in range(longest):
        rows = np.flatnonzero(sizes > p)
        w = weights[starts[rows] + p]
        total[rows] += w * w
    spent = np.zeros(n, dtype=np.float64)
    out = np.zeros(n, dtype=np.int64)
    floor = threshold * threshold * (1.0 - 1e-9) - 1e-12  # rounding: keep more
    for p in range(longest):
        rows = np.flatnonzero(sizes > p)
        out[rows] += total[rows] - spent[rows] >= floor
        w = weights[starts[rows] + p]
        spent[rows] += w * w
    return out


def _verified(
    sets: TokenSets,
    left: IntArray,
    right: IntArray,
    empty: IntArray,
    t: float,
    merged: bool = False,
) -> JoinResult:
    """``merged``: count overlaps pair by pair (:func:`_pair_overlaps`), for a caller that
    verifies few pairs of a large collection."""
    sizes = sets.sizes
    count = _pair_overlaps if merged else _overlaps
    inter = count(sets, left, right) if len(left) else np.empty(0, dtype=np.int64)
    union = sizes[left] + sizes[right] - inter
    similarity = inter / np.maximum(union, 1)
    keep = similarity >= t
    return JoinResult(
        left=left[keep],
        right=right[keep],
        similarity=similarity[keep].astype(np.float64),
        empty=empty,
        threshold=t,
    )


def join_texts(
    texts: Sequence[str], threshold: float, measure: Measure | str = Measure.BIGRAMS
) -> JoinResult:
    """Tokenise ``texts`` under ``measure`` and join them (indices refer to ``texts``)."""
    return similarity_join(encode(texts, measure), threshold)


def focused_join(
    sets: TokenSets,
    focus: IntArray,
    threshold: float,
    *,
    stats: list[JoinStats] | None = None,
) -> JoinResult:
    """The pairs of :func:`similarity_join` that involve at least one set of ``focus``.

    Exactly those: the nightly consolidation joins the entries changed since its last run
    against the whole store, and must find every pair the full join would find among them and
    between them and the rest. Only the focus sets probe; every set's prefix is indexed. Both
    sides use the probe prefix (``|s| - ceil(t |s|) + 1``), valid whatever the two sizes are,
    because ``J >= t`` needs an overlap of ``ceil(t max(|x|, |y|))``. The work grows with the
    focus and the postings its rare prefix tokens meet, not with the pairs among the rest.

    ``empty`` is the empty-set clique restricted to pairs with a focus member: all empty sets
    when a focus set is empty, none otherwise.
    """
    return FocusedJoin(sets, threshold)(focus, stats=stats)


class FocusedJoin:
    """:func:`focused_join` with its index side (every set's prefix occurrences grouped by
    token and size, the bit images) built once, for a caller that joins several focus sets
    against the same sets: that side is a sort of the whole collection's prefixes, the probe
    side only the focus's."""

    def __init__(self, sets: TokenSets, threshold: float, prefix: IntArray | None = None) -> None:
        """``prefix``: per set, a shorter prefix that still holds the *first* token (rarest)
        any pair the caller wants shares (a second condition the caller checks afterwards,
        as :func:`cosine_prefix` gives): only pairs meeting both are then sure to be found."""
        if math.isnan(threshold) or not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
        self.sets = sets
        self.t = t = float(threshold)
        sizes = sets.sizes
        n = len(sizes)
        self.max_size = max_size = int(sizes.max()) if n else 0
        self.width = width = max_size + 2
        probe_len = np.where(sizes > 0, sizes - _min_overlap(t, sizes) + 1, 0)
        if prefix is not None:
            probe_len = np.minimum(probe_len, prefix)
        self.probe_len = probe_len
        # Every set's prefix occurrences, grouped by (token, set size), then by set: one int64
        # key sorted in place (the order a stable argsort by (token, size) gives), and the
        # owners kept 32-bit; no member-long temporary of the whole collection.
        owner = _owners(probe_len)
        key = sets.tokens[_members(sets.offsets[:-1], probe_len)]
        key *= width
        key += sizes[owner]
        span = max(n, 1)
        if (max(sets.vocabulary, 1) + 1) * width * span < 2**62:
            key *= span
            key += owner
            del owner
            key.sort()
            self.owner = cast(OwnerArray, (key % span).astype(owner_kind(n)))
            np.floor_divide(key, span, out=key)
            self.group_key: IntArray = key
        else:  # pragma: no cover - a vocabulary of billions
            order = np.argsort(key, kind="stable")
            self.group_key, self.owner = key[order], owner[order]
            del order
        ratio = t / (1 + t)
        total = np.arange(2 * max_size + 1, dtype=np.int64)
        self.limit = (total - 2 * np.ceil(ratio * total - _EPS)).astype(np.int32)
        self.coarse = _bit_images(sets, 64)[0]
        self.fine = _bit_images(sets, 256)

    def __call__(self, focus: IntArray, *, stats: list[JoinStats] | None = None) -> JoinResult:
        sets, t = self.sets, self.t
        sizes = sets.sizes
        n = len(sizes)
        focus = np.unique(np.asarray(focus, dtype=np.int64))
        if len(focus) and (focus[0] < 0 or focus[-1] >= n):
            raise ValueError(f"focus indices must lie in [0, {n}), got {focus[0]}..{focus[-1]}")
        empty = np.flatnonzero(sizes == 0)
        if not np.isin(focus, empty).any():
            empty = empty[:0]
        none = np.empty(0, dtype=np.int64)
        focus = focus[sizes[focus] > 0]
        if len(focus) == 0 or n < 2:
            return _verified(sets, none, none, empty, t)

        max_size, width, group_key, owner = self.max_size, self.width, self.group_key, self.owner
        # The focus sets' prefix occurrences and, for each, its partners' slice of ``group_key``.
        plen = self.probe_len[focus]
        f_owner = np.repeat(focus, plen)
        f_pos = np.arange(len(f_owner), dtype=np.int64) - np.repeat(np.cumsum(plen) - plen, plen)
        f_start = np.repeat(sets.offsets[focus], plen)
        f_token = sets.tokens[f_start + f_pos]
        f_size = sizes[f_owner]
        shortest = _min_overlap(t, f_size)
        longest = np.minimum(np.floor(f_size / t + _EPS).astype(np.int64), max_size)
        lo = np.searchsorted(group_key, f_token * width + shortest, side="left")
        hi = np.searchsorted(group_key, f_token * width + longest, side="right")
        count = hi - lo
        start = np.cumsum(count) - count
        total_raw = int(count.sum())

        limit, coarse, fine = self.limit, self.coarse, self.fine
        kept: list[IntArray] = []
        after64 = 0
        bounds = np.searchsorted(start, np.arange(0, total_raw + CHUNK, CHUNK), side="left")
        edges = np.unique(np.append(bounds, len(count)))
        for a_lo, a_hi in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            c = count[a_lo:a_hi]
            m = int(c.sum())
            if m == 0:
                continue
            slot = np.arange(m, dtype=np.int64) - np.repeat(start[a_lo:a_hi] - start[a_lo], c)
            a = np.repeat(f_owner[a_lo:a_hi], c)
            b = owner[np.repeat(lo[a_lo:a_hi], c) + slot].astype(np.int64)
            del slot
            lim = limit[sizes[a] + sizes[b]]
            ok = (a != b) & (np.bitwise_count(coarse[a] ^ coarse[b]) <= lim)
            a, b, lim = a[ok], b[ok], lim[ok]
            after64 += len(a)
            ok = _xor_bits(fine, a, b) <= lim
            a, b = a[ok], b[ok]
            kept.append(np.minimum(a, b) * n + np.maximum(a, b))
        keys = np.sort(np.concatenate(kept)) if kept else none
        deduped = keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys
        result = _verified(sets, deduped // n, deduped % n, empty, t, merged=True)
        if stats is not None:
            stats.append(JoinStats(len(owner), total_raw, after64, len(keys), len(deduped)))
        return result


_COSINE_SLACK = 1e-6
"""Relative slack of the cosine bounds: float rounding of the suffix norms is ~1e-15, so a pair
whose computed cosine reaches the threshold always passes them."""

_DEDUPE = 8_000_000
"""Candidate keys held before the duplicates among them are dropped: a pair sharing several
prefix tokens is found once per token, and at 1M lessons the raw survivors are ~10x the pairs."""


def suffix_norms(sets: TokenSets, weights: FloatArray) -> FloatArray:
    """Per member: the L2 norm of its set's ``weights`` from that member to the set's end (each
    set summed on its own, from its last member back, so no sum runs across sets). Sets are
    taken longest first, so step ``p`` touches only the sets longer than ``p``: the work is the
    members, whatever the longest set."""
    sizes = sets.sizes
    n = len(sizes)
    out = np.zeros(len(sets.tokens), dtype=np.float64)
    if n == 0 or len(sets.tokens) == 0:
        return out
    order = np.argsort(-sizes, kind="stable")
    longer = np.searchsorted(-sizes[order], -np.arange(int(sizes.max())), side="left")
    starts = sets.offsets[:-1][order]
    total = np.zeros(n, dtype=np.float64)
    for p in range(int(sizes.max()) - 1, -1, -1):
        m = int(longer[p])  # the sets longer than p, which hold a member at position p
        at = starts[:m] + p
        w = weights[at]
        total[:m] += w * w
        out[at] = np.sqrt(total[:m])
    return out


def cosine_join(
    sets: TokenSets,
    weights: FloatArray,
    cosine: float,
    jaccard: float,
    *,
    stats: list[JoinStats] | None = None,
) -> JoinResult:
    """Every pair ``left < right`` of non-empty ``sets`` with Jaccard ``>= jaccard`` and weighted
    cosine (:func:`weighted_overlaps` with ``weights``, each set L2-normalised) ``>= cosine``,
    with its Jaccard as ``similarity``: exactly the pairs of :func:`similarity_join` at
    ``jaccard`` whose :func:`weighted_overlaps` reaches ``cosine``, computed by the same
    arithmetic, without finding the Jaccard pairs first (their number grows with the square of
    the store). ``cosine <= 1`` (at most 0 it cuts nothing: the pairs of the Jaccard join
    without its empty clique), ``0 < jaccard <= 1``.

    Let the pair's *first* shared token (the rarest) sit at position ``i`` of ``x`` and ``j`` of
    ``y``, and ``s_x(i)`` be the norm of ``x``'s weights from ``i`` on (:func:`suffix_norms`).
    Every shared token lies at or after ``i`` and ``j``, so (Cauchy-Schwarz)
    ``cosine <= s_x(i) s_y(j)``, and more sharply ``<= w_x(i) w_y(j) + s_x(i+1) s_y(j+1)``.
    Hence only occurrences with ``s >= cosine`` (the cosine prefix of :func:`cosine_prefix`,
    cut to the Jaccard probe prefix too) are indexed, grouped by token and sorted by ``s``, and
    an occurrence meets only the later occurrences of its group with ``s_y >= cosine / s_x``:
    one contiguous slice per occurrence (found by ``searchsorted``), each unordered pair of
    occurrences met once. A token shared near both sets' ends has small norms on both sides, so
    the common tokens' long groups are cut hardest. Survivors of the sharper bound, of the
    positional Jaccard bound ``1 + min(|x| - 1 - i, |y| - 1 - j) >= ceil(t (|x| + |y|) / (1 + t))``
    and of the 64- and 256-bit images (:func:`similarity_join`) are de-duplicated and verified
    on the full sets. The bounds hold at the first shared token, so that occurrence pair is
    always kept; the others may be dropped or kept, the de-duplication does not care.
    """
    if math.isnan(cosine) or cosine > 1.0:
        raise ValueError(f"cosine threshold must be at most 1, got {cosine!r}")
    if math.isnan(jaccard) or not 0.0 < jaccard <= 1.0:
        raise ValueError(f"jaccard threshold must be in (0, 1], got {jaccard!r}")
    t = float(jaccard)
    sizes = sets.sizes
    n = len(sizes)
    none = np.empty(0, dtype=np.int64)
    if n < 2 or not len(sets.tokens):
        return _verified(sets, none, none, none, t)
    low = float(cosine) - abs(float(cosine)) * _COSINE_SLACK
    norms = suffix_norms(sets, weights)

    # Indexed occurrences: in both prefixes, grouped by token, each group by suffix norm.
    owner = _owners(sizes)
    position = np.arange(len(sets.tokens), dtype=np.int64)
    position -= np.repeat(sets.offsets[:-1], sizes)
    probe_len = sizes - _min_overlap(t, sizes) + 1
    at = np.flatnonzero((norms >= low) & (position < probe_len[owner]))
    del position
    bits = min(30, 61 - (max(sets.vocabulary, 1) + 1).bit_length())
    scale = float(1 << bits)
    span = (1 << bits) + 1
    key = sets.tokens[at] * span
    key += np.minimum(np.floor(norms[at] * scale), scale).astype(np.int64)
    order = np.argsort(key)
    key, at = key[order], at[order]
    del order
    token = key // span
    # Occurrence k meets the occurrences after it in its group with s >= low / s_k.
    floor = np.minimum(np.floor(low / norms[at] * scale), scale).astype(np.int64)
    first = np.searchsorted(key, token * span + floor, side="left")
    del floor
    end = np.searchsorted(key, (token + 1) * span, side="left")
    del key, token
    first = np.maximum(first, np.arange(1, len(at) + 1, dtype=np.int64))
    count = np.maximum(end - first, 0)
    del end
    before = np.cumsum(count) - count
    total_raw = int(count.sum())

    occ_owner = owner[at]
    del owner
    occ_weight = weights[at]
    after = at + 1  # the member after each occurrence, when its set holds one
    occ_next = np.where(
        after < sets.offsets[1:][occ_owner], norms[np.minimum(after, len(norms) - 1)], 0.0
    )
    del after, norms
    occ_size = sizes[occ_owner].astype(np.int32)
    occ_rest = occ_size - 1 - (at - sets.offsets[occ_owner]).astype(np.int32)
    del at
    coarse = _bit_images(sets, 64)[0]
    occ_image = coarse[occ_owner]
    del coarse
    fine = _bit_images(sets, 256)
    ratio = t / (1 + t)
    pair_size = np.arange(2 * int(sizes.max()) + 1, dtype=np.int64)
    need = np.ceil(ratio * pair_size - _EPS)
    limit = (pair_size - 2 * need).astype(np.int32)
    need32 = need.astype(np.int32)

    distinct = none
    pending: list[IntArray] = []
    held = after_filters = after256 = 0
    edges = np.searchsorted(before, np.arange(0, total_raw + CHUNK, CHUNK), side="left")
    edges = np.unique(np.append(edges, len(count)))
    for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
        c = count[lo:hi]
        m = int(c.sum())
        if m == 0:
            continue
        k = np.repeat(np.arange(lo, hi, dtype=np.int64), c)
        j = np.arange(m, dtype=np.int64)
        j += np.repeat(first[lo:hi] - (before[lo:hi] - before[lo]), c)
        ok = occ_weight[k] * occ_weight[j] + occ_next[k] * occ_next[j] >= low
        k, j = k[ok], j[ok]
        both = occ_size[k] + occ_size[j]
        ok = np.bitwise_count(occ_image[k] ^ occ_image[j]) <= limit[both]
        ok &= np.minimum(occ_rest[k], occ_rest[j]) + 1 >= need32[both]
        a, b = occ_owner[k[ok]].astype(np.int64), occ_owner[j[ok]].astype(np.int64)
        del k, j, ok, both
        after_filters += len(a)
        ok = _xor_bits(fine, a, b) <= limit[sizes[a] + sizes[b]]
        a, b = a[ok], b[ok]
        after256 += len(a)
        pending.append(np.minimum(a, b) * n + np.maximum(a, b))
        held += len(a)
        if held >= _DEDUPE:
            distinct, pending, held = _distinct([distinct, *pending]), [], 0
    distinct = _distinct([distinct, *pending])
    result = _verified_cosine(sets, weights, distinct // n, distinct % n, float(cosine), t)
    if stats is not None:
        stats.append(JoinStats(len(occ_owner), total_raw, after_filters, after256, len(distinct)))
    return result


def _distinct(parts: list[IntArray]) -> IntArray:
    """The sorted distinct values of ``parts`` together."""
    keys = np.sort(np.concatenate(parts))
    if len(keys):
        keys = keys[np.r_[True, keys[1:] != keys[:-1]]]
    return keys


def _verified_cosine(
    sets: TokenSets, weights: FloatArray, left: IntArray, right: IntArray, cosine: float, t: float
) -> JoinResult:
    """The pairs at Jaccard ``>= t`` (the division :func:`_verified` does) whose weighted
    overlap (the sum :func:`weighted_overlaps` does) reaches ``cosine``, in the order given."""
    sizes = sets.sizes
    inter = np.zeros(len(left), dtype=np.int64)
    overlap = np.zeros(len(left), dtype=np.float64)
    step = max(1, CHUNK // max(2 * int(sizes.max()) if len(sets) else 1, 1))
    for lo in range(0, len(left), step):
        a, b = left[lo : lo + step], right[lo : lo + step]
        pair, in_a, in_b = _shared_members(sets, a, b)
        inter[lo : lo + step] = np.bincount(pair, minlength=len(a))
        products = weights[in_a] * weights[in_b]
        overlap[lo : lo + step] = np.bincount(pair, weights=products, minlength=len(a))
    similarity = inter / np.maximum(sizes[left] + sizes[right] - inter, 1)
    keep = (similarity >= t) & (overlap >= cosine)
    none = np.empty(0, dtype=np.int64)
    return JoinResult(left[keep], right[keep], similarity[keep].astype(np.float64), none, t)
