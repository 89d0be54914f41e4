"""Near-duplicate lookup: opencode-swarm's ``findNearDuplicate`` semantics, indexed.

The answer is exactly the reference's: the *first entry in file order* whose word-bigram
Jaccard with the candidate is ``>= threshold`` (two empty bigram sets are identical). Instead of
re-tokenising every lesson on every add, the index keeps each entry's bigram set and posting
lists (bigram → slots in file order), and uses prefix filtering: an entry reaching the threshold
must share at least one of the candidate's ``|A| - ceil(t·|A|) + 1`` rarest bigrams, so only
those posting lists are read and each hit is verified with the exact Jaccard.
"""

from __future__ import annotations

import bisect
import math
import struct
from collections.abc import Callable, Iterable
from functools import lru_cache

from swarmq.similarity.text import jaccard, word_bigrams

cached_bigrams = lru_cache(maxsize=4096)(word_bigrams)
"""``word_bigrams`` remembered for recent lessons: an add tokenises its lesson to look for a
twin and again when its entry is indexed."""


class BigramIndex:
    """Bigram sets and posting lists of the lessons at integer slots (slot order = file order)."""

    def __init__(self) -> None:
        self._sets: dict[int, frozenset[str]] = {}
        self._postings: dict[str, bytearray] = {}
        """Each posting list packed as int64 slots (:data:`_SLOT`): a list (or an array) is an
        object the cyclic garbage collector scans, and a 10k-entry store has over 100k posting
        lists, most of a worker's tracked objects and so most of every full collection; a
        bytearray is not tracked."""
        self._empty: list[int] = []
        """Slots whose lesson has no bigram (0-1 words, or e.g. Chinese-only text)."""

    def __len__(self) -> int:
        return len(self._sets)

    def bigrams(self, slot: int) -> frozenset[str]:
        return self._sets[slot]

    def add(self, slot: int, lesson: str) -> None:
        """Index a lesson; ``slot`` must be larger than every slot already indexed."""
        grams = cached_bigrams(lesson)
        self._sets[slot] = grams
        if not grams:
            self._empty.append(slot)
        packed = _SLOT.pack(slot)
        for gram in grams:
            posting = self._postings.get(gram)
            if posting is None:
                self._postings[gram] = bytearray(packed)
            else:
                posting += packed

    def replace(self, slot: int, lesson: str) -> None:
        """Re-index a slot whose lesson changed, keeping its file position."""
        old = self._sets.get(slot)
        new = word_bigrams(lesson)
        if old == new:
            return
        self.remove(slot)
        self._sets[slot] = new
        if not new:
            bisect.insort(self._empty, slot)
        for gram in new:
            slots = _slots(self._postings.get(gram, b""))
            bisect.insort(slots, slot)
            self._postings[gram] = _packed(slots)

    def remove(self, slot: int) -> None:
        grams = self._sets.pop(slot, None)
        if grams is None:
            return
        if not grams:
            self._empty.remove(slot)
        for gram in grams:
            slots = [s for s in _slots(self._postings[gram]) if s != slot]
            if slots:
                self._postings[gram] = _packed(slots)
            else:
                del self._postings[gram]

    def find(
        self,
        lesson: str,
        threshold: float,
        accept: Callable[[int], bool] = lambda slot: True,
    ) -> int | None:
        """The first accepted slot (file order) whose Jaccard with ``lesson`` is >= threshold."""
        candidate = cached_bigrams(lesson)
        if threshold <= 0.0:
            return next((s for s in sorted(self._sets) if accept(s)), None)
        if not candidate:
            return next((s for s in self._empty if accept(s)), None)
        size = len(candidate)
        # Conservative by one so float rounding of t·|A| can never hide a true match.
        needed = max(1, math.ceil(threshold * size) - 1)
        # Any |A| - needed + 1 of the candidate's bigrams will do; the rarest read the least.
        # (Posting lists as (length, list) pairs: a key function costs a call per bigram.)
        postings = self._postings
        probe = sorted([(len(p), p) for p in (postings.get(g, b"") for g in candidate)])
        hits: set[int] = set()
        for _, posting in probe[: size - needed + 1]:
            hits.update(_slots(posting))
        best: int | None = None
        for slot in sorted(hits):
            if best is not None and slot > best:
                break
            other = self._sets[slot]
            # length filter: |B| within [t·|A|, |A|/t] is necessary for J >= t
            if len(other) < threshold * size - 1e-9 or len(other) * threshold > size + 1e-9:
                continue
            if jaccard(candidate, other) >= threshold and accept(slot):
                best = slot
                break
        return best


def find_near_duplicate_scan(lesson: str, lessons: Iterable[str], threshold: float) -> int | None:
    """The reference algorithm (a full scan re-tokenising every lesson): the baseline the
    benchmark compares against and the oracle the tests check the index with."""
    candidate = word_bigrams(lesson)
    for position, other in enumerate(lessons):
        if jaccard(candidate, word_bigrams(other)) >= threshold:
            return position
    return None


_SLOT = struct.Struct("=q")
"""A slot in a posting list: native int64, as ``memoryview.cast("q")`` reads it back."""


def _slots(posting: bytes | bytearray) -> list[int]:
    return memoryview(posting).cast("q").tolist()


def _packed(slots: Iterable[int]) -> bytearray:
    return bytearray(b"".join(_SLOT.pack(slot) for slot in slots))
