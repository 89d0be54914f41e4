"""Lessons as integer token sets, the input of the similarity join.

Each lesson becomes the *set* of its tokens under one :class:`Measure` (exactly the sets of
:mod:`swarmq.similarity.text`), encoded as integer token ids that are ranked by ascending
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

import numpy as np
import numpy.typing as npt

from swarmq.similarity.measure import Measure

IntArray = npt.NDArray[np.int64]


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

    def take(self, rows: IntArray) -> TokenSets:
        """The sets ``rows`` (in that order), ranks kept: a join over them finds exactly their
        pairs (prefix filtering holds for any one order of the tokens)."""
        counts = self.sizes[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        members = np.repeat(self.offsets[rows] - offsets[:-1], counts)
        members += np.arange(int(offsets[-1]), dtype=np.int64)
        return TokenSets(self.tokens[members], offsets, self.vocabulary)


_SEPARATOR = "Q"
"""Joins the lower-cased lessons into one string: an upper-case ASCII letter survives neither
``str.lower`` nor either tokeniser, so it can never be part of a word."""

_ASCII_WORD_BYTES = bytes(
    byte if chr(byte) in "abcdefghijklmnopqrstuvwxyz0123456789_" + _SEPARATOR else 0x20
    for byte in range(256)
)
"""opencode-swarm's normalisation as a byte table: after ``lower()``, every character that is not
an ASCII word character (including each byte of a non-ASCII character) becomes a space."""

_UNICODE_WORD = re.compile(r"\w+")
"""openknowledge's tokens, for lessons with non-ASCII characters."""


def _ascii_words(lowered: Sequence[str]) -> list[bytes]:
    """Runs of ASCII word characters of already lower-cased lessons, separator-delimited."""
    joined = f" {_SEPARATOR} ".join(lowered).encode("utf-8", "surrogatepass")
    words: list[bytes] = joined.translate(_ASCII_WORD_BYTES).split()
    return words


def _words(texts: Sequence[str], measure: Measure) -> tuple[list[bytes], list[int] | None]:
    """Every word of every lesson, lessons separated by the separator token, in bulk.

    Identical to ``opencode_words`` (runs of ASCII word characters of the lower-cased text) and
    to ``word_tokens`` (runs of ``\\w``), without a regex call per lesson: for bigrams, and for
    the ASCII lessons under the token measure, a byte table does the work. The second value is
    the order the lessons come out in when it is not the input order.
    """
    lowered = list(map(str.lower, texts))
    if measure is Measure.BIGRAMS:
        return _ascii_words(lowered), None
    plain = [i for i, text in enumerate(lowered) if text.isascii()]
    if len(plain) == len(lowered):
        return _ascii_words(lowered), None
    other = [i for i, text in enumerate(lowered) if not text.isascii()]
    words = _ascii_words([lowered[i] for i in plain]) if plain else []
    unicode_words = (
        f" {_SEPARATOR} ".join(" ".join(_UNICODE_WORD.findall(lowered[i])) for i in other)
        .encode("utf-8", "surrogatepass")
        .split()
    )
    if plain:
        words.append(_SEPARATOR.encode())
    words.extend(unicode_words)
    return words, plain + other


def _word_ids(texts: Sequence[str], measure: Measure) -> tuple[IntArray, IntArray, int]:
    """Flat word ids, the lesson each belongs to (words of a lesson contiguous, in text order),
    and the number of distinct words."""
    words, lesson_order = _words(texts, measure)
    vocabulary = dict.fromkeys(words)
    ids = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
    flat = np.fromiter(map(ids.__getitem__, words), dtype=np.int64, count=len(words))
    is_sep = flat == ids.get(_SEPARATOR.encode(), -1)
    # The k-th lesson (in output order) owns the words between separators k-1 and k.
    owner = np.cumsum(is_sep)[~is_sep]
    if lesson_order is not None:
        owner = np.asarray(lesson_order, dtype=np.int64)[owner]
    return flat[~is_sep], owner, len(vocabulary)


def encode(texts: Sequence[str], measure: Measure | str = Measure.BIGRAMS) -> TokenSets:
    """Tokenise ``texts`` and rank their tokens by ascending document frequency."""
    measure = Measure(measure)
    words, owner, n_words = _word_ids(texts, measure)
    n = len(texts)
    if measure is Measure.BIGRAMS:
        # A bigram joins position k and k+1 of the same lesson.
        same = owner[:-1] == owner[1:]
        codes = (words[:-1] * max(n_words, 1) + words[1:])[same]
        owner = owner[:-1][same]
    else:
        codes = words
    # Sort by (token, lesson): duplicates within a lesson become adjacent (set semantics) and
    # each token's run length is its document frequency.
    span = max(n, 1)
    if (int(codes.max()) + 1 if len(codes) else 1) * span >= 2**62:  # pragma: no cover
        raise ValueError(f"{n} lessons x {int(codes.max())} token codes overflow an int64 key")
    keys = np.sort(codes * span + owner)
    keys = keys[_first_of_runs(keys)]
    codes, owner = keys // span, keys % span
    del keys
    run_starts = np.flatnonzero(_first_of_runs(codes))
    frequency = np.diff(np.append(run_starts, len(codes)))
    distinct = len(run_starts)
    # Rank tokens by (document frequency, code): rarest first, deterministic ties.
    rank_of_run = np.empty(distinct, dtype=np.int64)
    rank_of_run[np.argsort(frequency, kind="stable")] = np.arange(distinct, dtype=np.int64)
    vocabulary = max(distinct, 1)
    ordered = np.sort(owner * vocabulary + np.repeat(rank_of_run, frequency))
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=offsets[1:])
    return TokenSets(tokens=ordered % vocabulary, offsets=offsets, vocabulary=distinct)


def _first_of_runs(values: IntArray) -> npt.NDArray[np.bool_]:
    """True where a sorted array starts a run of equal values (numpy's hash-based
    ``unique`` is several times slower than this on sorted int64)."""
    first = np.ones(len(values), dtype=bool)
    first[1:] = values[1:] != values[:-1]
    return first


def from_codes(
    codes: npt.NDArray[np.uint64], offsets: IntArray
) -> tuple[TokenSets, npt.NDArray[np.uint64], IntArray]:
    """Sets given as token *codes* (set ``i`` is ``codes[offsets[i]:offsets[i + 1]]``, each
    code at most once per set: a hashed token, say), ranked rarest first as :func:`encode`
    ranks its tokens. Also returns the distinct codes (sorted) and each one's document
    frequency, for a caller that looks tokens up by code."""
    n = len(offsets) - 1
    sizes = np.diff(offsets)
    # np.unique(return_inverse=True) by hand, with 32-bit run numbers and each temporary
    # dropped as soon as it is spent: a 1M store's bigram codes are 15M members.
    by_code = np.argsort(codes, kind="stable")  # radix sort: several times faster
    ordered_codes = codes[by_code]
    first = np.ones(len(ordered_codes), dtype=bool)
    first[1:] = ordered_codes[1:] != ordered_codes[:-1]
    distinct = ordered_codes[first]
    del ordered_codes
    run = np.cumsum(first, dtype=np.int32)
    run -= 1
    del first
    frequency = np.bincount(run, minlength=len(distinct))
    rank_of_run = np.empty(len(distinct), dtype=np.int32)
    rank_of_run[np.argsort(frequency, kind="stable")] = np.arange(len(distinct), dtype=np.int32)
    rank = np.empty(len(codes), dtype=np.int32)
    rank[by_code] = rank_of_run[run]
    del by_code, run
    vocabulary = max(len(distinct), 1)
    ordered = np.repeat(np.arange(n, dtype=np.int64), sizes)
    ordered *= vocabulary  # in place
    ordered += rank
    del rank
    ordered.sort()
    np.remainder(ordered, vocabulary, out=ordered)
    sets = TokenSets(
        tokens=ordered,
        offsets=np.asarray(offsets, dtype=np.int64),
        vocabulary=len(distinct),
    )
    return sets, distinct, frequency.astype(np.int64)
