"""Lessons as integer token sets, the input of the similarity join.

Each lesson becomes the *set* of its tokens under one :class:`Measure` (exactly the sets of
:mod:`swarmq.memory.similarity.text`), encoded as integer token ids that are ranked by ascending
document frequency: the rarest token gets rank 0. A set is stored sorted by rank, so its first
tokens are its most selective ones, which is what prefix filtering needs. All sets live in two
flat numpy arrays (``tokens`` and ``offsets``, CSR style), so the join never touches a Python
object per token.

Word bigrams are encoded as ``first_word_id * vocabulary + second_word_id`` instead of building
``"w1 w2"`` strings: the pair of words identifies the bigram string exactly (words contain no
space), and encoding costs one dictionary lookup per word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


class Measure(StrEnum):
    """Which token sets two lessons are compared on."""

    BIGRAMS = "bigrams"
    """Word bigrams of opencode-swarm's normalised text (its near-duplicate detector)."""
    TOKENS = "tokens"
    """Lower-cased Unicode word tokens (openknowledge's lexical Jaccard)."""


@dataclass(frozen=True, slots=True)
class TokenSets:
    """``n`` token sets in CSR layout; set ``i`` is ``tokens[offsets[i]:offsets[i + 1]]``."""

    tokens: IntArray
    """Token ranks, ascending within each set (rank 0 = rarest token of the collection)."""
    offsets: IntArray
    """``n + 1`` boundaries into ``tokens``."""
    vocabulary: int
    """Number of distinct tokens."""

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def sizes(self) -> IntArray:
        return np.diff(self.offsets)

    def members(self, index: int) -> IntArray:
        return self.tokens[self.offsets[index] : self.offsets[index + 1]]


_SEPARATOR = "Q"
"""Joins the lower-cased lessons into one string: an upper-case ASCII letter survives neither
``str.lower`` nor either tokeniser, so it can never be part of a word."""

_ASCII_WORD_BYTES = bytes(
    byte if chr(byte) in "abcdefghijklmnopqrstuvwxyz0123456789_" + _SEPARATOR else 0x20
    for byte in range(256)
)
"""opencode-swarm's normalisation as a byte table: after ``lower()``, every character that is not
an ASCII word character (including each byte of a non-ASCII character) becomes a space."""

_UNICODE_WORD = re.compile(rf"[^\WA-Z]+|{_SEPARATOR}")
"""``\\w+`` on lower-cased text (which holds no ``A-Z``), or the separator."""


def _words(texts: Sequence[str], measure: Measure) -> list[Any]:
    """Every word of every lesson in order, lessons separated by the separator token.

    One bulk pass instead of a regex call per lesson: identical to ``opencode_words`` (runs of
    ASCII word characters of the lower-cased text) and to ``word_tokens`` (runs of ``\\w``).
    """
    joined = f" {_SEPARATOR} ".join(map(str.lower, texts))
    if measure is Measure.BIGRAMS:
        return joined.encode("utf-8", "surrogatepass").translate(_ASCII_WORD_BYTES).split()
    return _UNICODE_WORD.findall(joined)


def _word_ids(texts: Sequence[str], measure: Measure) -> tuple[IntArray, IntArray, int]:
    """Flat word ids and per-lesson word counts."""
    words = _words(texts, measure)
    vocabulary = dict.fromkeys(words)
    ids = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
    flat = np.fromiter(map(ids.__getitem__, words), dtype=np.int64, count=len(words))
    separator = ids.get(_SEPARATOR.encode() if measure is Measure.BIGRAMS else _SEPARATOR, -1)
    is_sep = flat == separator
    # Lesson k owns the words between separator k-1 and separator k.
    owner = np.cumsum(is_sep)[~is_sep]
    counts = np.bincount(owner, minlength=len(texts))
    return flat[~is_sep], counts, len(vocabulary)


def encode(texts: Sequence[str], measure: Measure | str = Measure.BIGRAMS) -> TokenSets:
    """Tokenise ``texts`` and rank their tokens by ascending document frequency."""
    measure = Measure(measure)
    words, counts, n_words = _word_ids(texts, measure)
    n = len(counts)
    owner = np.repeat(np.arange(n, dtype=np.int64), counts)
    if measure is Measure.BIGRAMS:
        # A bigram joins position k and k+1 of the same lesson.
        same = owner[:-1] == owner[1:]
        codes = (words[:-1] * max(n_words, 1) + words[1:])[same]
        owner = owner[:-1][same]
    else:
        codes = words
    # Set semantics (one occurrence of a token per lesson), via one sort of a combined key.
    span = max(int(codes.max()) + 1 if len(codes) else 1, 1)
    if n * span >= 2**62:  # pragma: no cover - beyond any realistic store
        raise ValueError(f"{n} lessons x {span} token codes overflow the int64 join key")
    keys = np.sort(owner * span + codes)
    keys = keys[_first_of_runs(keys)]
    owner, codes = keys // span, keys % span
    # Rank distinct tokens by (document frequency, code): rarest first, deterministic ties.
    by_code = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(_first_of_runs(codes[by_code]))
    frequency = np.diff(np.append(starts, len(codes)))
    distinct = len(starts)
    rank_of_run = np.empty(distinct, dtype=np.int64)
    rank_of_run[np.argsort(frequency, kind="stable")] = np.arange(distinct, dtype=np.int64)
    ranks = np.empty(len(codes), dtype=np.int64)
    ranks[by_code] = np.repeat(rank_of_run, frequency)
    vocabulary = max(distinct, 1)
    ordered = np.sort(owner * vocabulary + ranks)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=offsets[1:])
    return TokenSets(tokens=ordered % vocabulary, offsets=offsets, vocabulary=distinct)


def _first_of_runs(values: IntArray) -> npt.NDArray[np.bool_]:
    """True where a sorted array starts a run of equal values (numpy's hash-based
    ``unique`` is several times slower than this on sorted int64)."""
    first = np.ones(len(values), dtype=bool)
    first[1:] = values[1:] != values[:-1]
    return first
