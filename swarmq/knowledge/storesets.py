"""The token sets of every active entry of a store, read from its persisted index, joined in
memory: the partners of a few lessons among all of them, exactly as the planner's join pairs
them.

:mod:`swarmq.consolidation`'s nightly run through the index (its ``_indexed`` module) needs,
for the lessons changed since the last run, every entry that can pair with them: the full
join's pairs with a changed entry are then among the entries it reads. Probing postings one
lesson at a time costs, per lesson, postings that grow with the store (a lesson of common words
has no short prefix), so a night with 1 % new entries grew with the square of the store. Here
the index's ``sets`` table (:mod:`._joinsets`: each entry's hashed word bigrams and paraphrase
words, lesson hash, template key hash) is read once, a few arrays, and the planner's own
:func:`~swarmq.similarity.join.focused_join` runs on it: its prefix filtering over the whole
store's sets is what keeps the candidates few, at the cost of one sequential read of the table
(about 70 bytes of blobs per entry).

Why the partners found are a superset of the full join's (the planner's exact joins on the
read-back lessons then decide):

* **bigrams**: the hashed set of a lesson with no colliding bigrams (:data:`~._joinsets.COLLIDES`)
  has its size and every shared bigram; a collision between two lessons' different bigrams only
  adds overlap and removes union, so the hashed Jaccard is at least the exact one, and the
  focused join at the same threshold finds the pair. Entries whose own bigrams collide are
  returned whatever the focus (:meth:`StoreSets.collided`). Empty sets meet every other empty
  one (the join's clique).
* **paraphrases**: the same join over the paraphrase words of the *distinct texts* of the active
  hand-written entries (the pass's population), at ``paraphrase_candidate_threshold``, and the
  IDF-weighted cosine of each candidate with the IDF of those texts (the pass's own weights:
  document frequency over distinct texts, smoothed, every set L2-normalised), kept at
  ``paraphrase_threshold``. Every entry holding a kept partner's text is a partner. Since the
  weights are known exactly, both sides' prefixes are also cut where the rest of a set's weight
  can no longer reach the cosine (:func:`~swarmq.similarity.join.cosine_prefix`): the first
  word a qualifying pair shares lies in both cut prefixes, and the Jaccard prefix of a common-
  word lesson (70 % of its words at 0.3) is what made this join grow with the square of the
  store.
* **templates**: every active entry with a focus entry's template key (by hash: equal keys,
  equal hashes).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from swarmq.knowledge._ftsindex import StaleIndex
from swarmq.knowledge._joinsets import COLLIDES, HAND, digest
from swarmq.similarity.join import FocusedJoin, cosine_prefix, idf_weights, weighted_overlaps
from swarmq.similarity.sets import TokenSets, from_codes

__all__ = ["StoreSets", "load"]

IntArray = npt.NDArray[np.int64]
CodeArray = npt.NDArray[np.uint64]
_FETCH = 50_000
_EPS = 1e-9


def _offsets(sizes: IntArray) -> IntArray:
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets


def _gather(codes: CodeArray, sizes: IntArray, rows: IntArray) -> tuple[CodeArray, IntArray]:
    """The sets ``rows`` of a CSR layout (``codes`` by ``sizes``), in that order."""
    offsets = _offsets(sizes)
    counts = sizes[rows]
    within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    out: CodeArray = codes[np.repeat(offsets[rows], counts) + within]
    return out, _offsets(counts)


class StoreSets:
    """Every active entry's join sets (rows in slot order)."""

    def __init__(
        self,
        slots: IntArray,
        kind: IntArray,
        text: IntArray,
        tkey: IntArray,
        grams: tuple[CodeArray, IntArray],
        words: tuple[CodeArray, IntArray],
    ) -> None:
        """``grams`` and ``words``: codes and set sizes of the hand-written rows, in order."""
        self.slots = slots
        self.kind = kind
        self.text = text
        self.tkey = tkey
        hand = np.flatnonzero((kind & HAND) != 0)
        self.hand = hand
        """Rows of the hand-written entries: the rows of :attr:`grams`."""
        self.grams, _, _ = from_codes(grams[0], _offsets(grams[1]))
        distinct, first = np.unique(text[hand], return_index=True)
        self.texts = distinct
        """Distinct lesson hashes of the hand-written entries, sorted (paraphrase rows)."""
        codes, offsets = _gather(words[0], words[1], first)
        del first
        self.words, self._word_codes, self._word_df = from_codes(codes, offsets)
        del codes, offsets
        self._texts_count = len(self.words)
        self._joins: dict[tuple[str, float], FocusedJoin] = {}

    def release(self) -> None:
        """Drop the store-wide arrays (a night's plan is made; its commit needs none of them,
        and a 1M store's are hundreds of MB the commit's own copy would add to)."""
        empty = np.zeros(0, dtype=np.int64)
        self.slots = self.kind = self.text = self.tkey = self.hand = self.texts = empty
        self._word_codes, self._word_df = np.zeros(0, dtype=np.uint64), empty
        self.grams = self.words = TokenSets(empty, np.zeros(1, dtype=np.int64), 0)
        self._joins.clear()

    def _join(self, which: str, threshold: float) -> FocusedJoin:
        """The whole store's side of the join, built once per measure and threshold."""
        found = self._joins.get((which, threshold))
        if found is None:
            sets = self.grams if which == "grams" else self.words
            found = self._joins[(which, threshold)] = FocusedJoin(sets, threshold)
        return found

    def __len__(self) -> int:
        return len(self.slots)

    def rows(self, slots: Iterable[int]) -> IntArray:
        """The rows of those of ``slots`` that are active entries."""
        wanted = np.unique(np.fromiter(slots, dtype=np.int64))
        found = np.searchsorted(self.slots, wanted)
        found = np.minimum(found, max(len(self.slots) - 1, 0))
        if not len(self.slots):
            return np.zeros(0, dtype=np.int64)
        out: IntArray = found[self.slots[found] == wanted]
        return out

    def collided(self) -> IntArray:
        """Active slots whose own bigrams or words share a hash (always candidates)."""
        out: IntArray = self.slots[(self.kind & COLLIDES) != 0]
        return out

    def bigram_partners(self, slots: Iterable[int], threshold: float) -> IntArray:
        """Active hand-written slots that may reach word-bigram Jaccard ``threshold`` with a
        hand-written entry of ``slots`` (their own included). A templated entry is comparable
        only with entries of its own template key (``consolidation.items.comparable``): its
        partners are :meth:`template_partners`', and it is no hand-written lesson's partner.
        (Co-change notes share most of their bigrams: joined with each other they would make
        a clique that grows with the store.)"""
        rows = self.rows(slots)
        if not len(rows) or not len(self.hand):
            return np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.hand, rows), len(self.hand) - 1)
        rows = at[self.hand[at] == rows]
        if not len(rows):
            return np.zeros(0, dtype=np.int64)
        found = self._join("grams", threshold)(rows)
        chosen = np.unique(np.concatenate([found.left, found.right, found.empty]))
        out: IntArray = self.slots[self.hand[chosen]]
        return out

    def template_partners(self, slots: Iterable[int]) -> IntArray:
        """Active slots with the template key of an entry of ``slots``."""
        keys = self.tkey[self.rows(slots)]
        keys = keys[keys != 0]
        if not len(keys):
            return np.zeros(0, dtype=np.int64)
        out: IntArray = self.slots[np.isin(self.tkey, keys)]
        return out

    def release_words(self) -> None:
        """Drop the paraphrase words' sets (:meth:`paraphrase_partners` is asked once a night,
        before the bigram join is built: the two never hold memory at once); :meth:`word_idf`
        still answers."""
        empty = np.zeros(0, dtype=np.int64)
        self.words = TokenSets(empty, np.zeros(1, dtype=np.int64), 0)

    def paraphrase_partners(self, slots: Iterable[int], jaccard: float, cosine: float) -> IntArray:
        """Active hand-written slots whose lesson may be a paraphrase of the lesson of a
        hand-written entry of ``slots``: term Jaccard ``>= jaccard`` and IDF cosine
        ``>= cosine`` (within float rounding), every entry holding such a text."""
        rows = self.rows(slots)
        rows = rows[(self.kind[rows] & HAND) != 0]
        if not len(rows) or not len(self.texts):
            return np.zeros(0, dtype=np.int64)
        if len(self.words) != len(self.texts):
            raise RuntimeError("the paraphrase words were released")
        focus = np.searchsorted(self.texts, np.unique(self.text[rows]))
        weights = idf_weights(self.words)
        prefix = cosine_prefix(self.words, weights, cosine)
        found = FocusedJoin(self.words, jaccard, prefix)(focus)  # once a night: not kept
        del prefix
        if not len(found.left):
            return np.zeros(0, dtype=np.int64)
        score = weighted_overlaps(self.words, found.left, found.right, weights)
        del weights
        strong = score >= cosine - _EPS
        partners = self.texts[np.unique(np.concatenate([found.left[strong], found.right[strong]]))]
        chosen = self.hand[np.isin(self.text[self.hand], partners)]
        out: IntArray = self.slots[chosen]
        return out

    def word_idf(self, words: Iterable[str]) -> dict[str, float]:
        """Each paraphrase word's IDF over the distinct hand-written lessons, the pass's
        ``log((1 + n) / (1 + df)) + 1``."""
        n = self._texts_count
        out: dict[str, float] = {}
        codes = self._word_codes
        for word in words:
            code = np.frombuffer(digest(word), dtype=np.uint64)[0]
            at = int(np.searchsorted(codes, code))
            df = int(self._word_df[at]) if at < len(codes) and codes[at] == code else 0
            out[word] = math.log((1.0 + n) / (1.0 + df)) + 1.0
        return out


def load(db: sqlite3.Connection) -> StoreSets:
    """The active entries' sets, from one scan of the index's ``sets`` table into arrays
    sized first (the blobs of a 1M store never live as Python objects at once, nor twice)."""
    where = "FROM sets WHERE active = 1"
    count, grams, words = db.execute(
        "SELECT count(*), total(CASE WHEN kind & 1 THEN length(grams) END), "
        f"total(CASE WHEN kind & 1 THEN length(words) END) {where}"
    ).fetchone()
    columns = [np.zeros(int(count), dtype=np.int64) for _ in range(4)]
    hands = int(db.execute(f"SELECT count(*) {where} AND kind & 1").fetchone()[0])
    codes = [np.zeros(int(grams) // 8, dtype=np.uint64), np.zeros(int(words) // 8, np.uint64)]
    sizes = [np.zeros(hands, dtype=np.int64), np.zeros(hands, dtype=np.int64)]
    row = hand_row = 0
    at = [0, 0]
    cursor = db.execute(f"SELECT slot, kind, text, tkey, grams, words {where} ORDER BY slot")
    while batch := cursor.fetchmany(_FETCH):
        rows = list(zip(*batch, strict=True))
        del batch
        n = len(rows[0])
        for k in range(4):
            columns[k][row : row + n] = rows[k]
        hand = np.flatnonzero((columns[1][row : row + n] & HAND) != 0).tolist()
        for k, blobs in enumerate((rows[4], rows[5])):
            chosen = [blobs[i] for i in hand]
            found = np.fromiter((len(b) // 8 for b in chosen), np.int64, len(chosen))
            sizes[k][hand_row : hand_row + len(hand)] = found
            total = int(found.sum())
            codes[k][at[k] : at[k] + total] = np.frombuffer(b"".join(chosen), dtype=np.uint64)
            at[k] += total
        row += n
        hand_row += len(hand)
        del rows
    if row != len(columns[0]) or hand_row != hands or at != [len(codes[0]), len(codes[1])]:
        raise StaleIndex("the index's join sets changed while read")
    slots, kind, text, tkey = columns
    return StoreSets(slots, kind, text, tkey, (codes[0], sizes[0]), (codes[1], sizes[1]))
