"""The persisted index of a store as consolidation reads it: the candidates of a lesson's
similarity joins, from postings, without loading the store.

:mod:`swarmq.consolidation`'s nightly run (its ``_indexed`` module, whose docstring gives the
exactness argument) asks which entries *may* reach a Jaccard threshold with a lesson, under the
word-bigram measure (the index's hashed bigram postings and ``grams`` column) and under the
paraphrase pass's term measure (the term postings, a dotted term's word runs included); reads
the entries it chose at their offsets; and takes document frequencies from the ``df`` table.
Each answer is a superset: the caller's exact join on the read-back lessons decides.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from swarmq.knowledge._ftsindex import (
    FileIndex,
    StaleIndex,
    gram_token,
    sidecar_path,
    term_token,
)
from swarmq.knowledge.model import Entry
from swarmq.knowledge.templates import TEMPLATES
from swarmq.similarity.normalize import term_text
from swarmq.similarity.text import word_bigrams

__all__ = ["IndexReader", "StaleIndex", "close", "file_digests", "open_reader"]

IntArray = npt.NDArray[np.int64]
DigestArray = npt.NDArray[np.uint64]
_EPS = 1e-9
RUN = re.compile(r"[a-z0-9_]+")
"""A word of ``encode(..., Measure.TOKENS)`` in ASCII text (``term_text`` is ASCII)."""
_FETCH = 100_000
PROBE_POSTINGS = 100_000
"""Postings read beyond a lesson's prefix, to cut candidates by what they hold (paraphrase
words: their prefix reaches common words, and each candidate cut saves a parse)."""
GRAM_POSTINGS = 2_000
"""The same for word bigrams, whose prefixes already leave a few candidates per lesson."""


def file_digests(path: Path) -> tuple[DigestArray, IntArray]:
    """The watermark digest of every line of ``path`` (its bytes without the newline, as
    :func:`~._watermark.line_digests` hashes an entry's ``line()``) and each line's offset:
    hashed, never parsed."""
    digests: list[bytes] = []
    offsets: list[int] = []
    position = 0
    with path.open("rb") as handle:
        for data in handle:
            body = data[:-1] if data.endswith(b"\n") else data
            digests.append(hashlib.blake2b(body, digest_size=8).digest())
            offsets.append(position)
            position += len(data)
    out: DigestArray = np.frombuffer(b"".join(digests), dtype=np.uint64)
    return out, np.asarray(offsets, dtype=np.int64)


class IndexReader:
    """One open index of the store being consolidated: per-slot columns, postings and
    document frequencies (cached), and entries read at their offsets."""

    def __init__(self, index: FileIndex) -> None:
        self.index = index
        self.db = index.db
        rows = self.db.execute(
            "SELECT e.slot, o.offset, e.line_no, e.grams, e.active "
            "FROM entries e JOIN offsets o ON o.slot = e.slot"
        )
        chunks: list[np.ndarray] = []
        while batch := rows.fetchmany(_FETCH):
            chunks.append(np.asarray(batch, dtype=np.int64).reshape(-1, 5))
        table = np.concatenate(chunks) if chunks else np.zeros((0, 5), dtype=np.int64)
        size = int(table[:, 0].max()) + 1 if len(table) else 0
        self.count = len(table)
        self.grams = np.full(size, -1, dtype=np.int64)
        self.active = np.zeros(size, dtype=bool)
        self.line_no = np.zeros(size, dtype=np.int64)
        self.grams[table[:, 0]] = table[:, 3]
        self.active[table[:, 0]] = table[:, 4] != 0
        self.line_no[table[:, 0]] = table[:, 2]
        by_offset = np.argsort(table[:, 1], kind="stable")
        self._offsets = table[by_offset, 1]
        self._slots = table[by_offset, 0]
        self.active_count = int(self.active.sum())
        self._df: dict[str, int] = {}
        self._postings: dict[str, IntArray] = {}
        self._pieces: dict[str, list[str]] | None = None
        self.read_count = 0
        """Entries parsed so far (the tests' and the bench's witness)."""

    def slots_at(self, offsets: IntArray) -> IntArray:
        """The slots of the entries starting at ``offsets`` (lines that are no entry: none)."""
        found = np.searchsorted(self._offsets, offsets)
        found = np.minimum(found, max(len(self._offsets) - 1, 0))
        if not len(self._offsets):
            return np.zeros(0, dtype=np.int64)
        hit = self._offsets[found] == offsets
        slots: IntArray = self._slots[found[hit]]
        return slots

    def changed(self, known: DigestArray) -> IntArray:
        """Slots of the entries whose line's digest is not among ``known`` (the watermark's:
        what the last run wrote)."""
        digests, offsets = file_digests(self.index.path)
        fresh = ~np.isin(digests, known)
        return self.slots_at(offsets[fresh])

    def entries(self, slots: Iterable[int]) -> dict[int, Entry]:
        wanted = sorted(set(slots))
        self.read_count += len(wanted)
        return self.index.entries(wanted)

    def frequencies(self, tokens: Iterable[str]) -> dict[str, int]:
        tokens = list(tokens)
        missing = [t for t in set(tokens) if t not in self._df]
        for start in range(0, len(missing), 900):
            chunk = missing[start : start + 900]
            marks = ",".join("?" * len(chunk))
            found = dict(
                self.db.execute(f"SELECT token, n FROM df WHERE token IN ({marks})", chunk)
            )
            for token in chunk:
                self._df[token] = int(found.get(token, 0))
        return {t: self._df[t] for t in tokens}

    def postings(self, token: str) -> IntArray:
        found = self._postings.get(token)
        if found is None:
            cursor = self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (f'"{token}"',))
            found = np.fromiter((slot for (slot,) in cursor), dtype=np.int64)
            self._postings[token] = found
        return found

    def empty(self) -> IntArray:
        """The active entries whose lesson has no word bigram."""
        slots: IntArray = np.flatnonzero(self.active & (self.grams == 0))
        return slots

    def pieces(self) -> dict[str, list[str]]:
        """Join word → the dotted terms of the store (``v1.2.3``) that split into it."""
        if self._pieces is None:
            self._pieces = defaultdict(list)
            for (token,) in self.db.execute("SELECT token FROM df WHERE token LIKE 't%'"):
                term = bytes.fromhex(token[1:]).decode("utf-8", "replace")
                runs = RUN.findall(term)
                if runs != [term]:
                    for run in set(runs):
                        self._pieces[run].append(token)
        return self._pieces

    def word_tokens(self, word: str) -> list[str]:
        """The index tokens whose postings together hold every entry with join word ``word``."""
        return [term_token(word), *self.pieces().get(word, ())]

    # -- candidates ---------------------------------------------------------------------------

    def _probe(
        self,
        groups: list[list[str]],
        must: int,
        weights: list[float],
        need: float,
        budget: int = PROBE_POSTINGS,
    ) -> IntArray:
        """Slots that may hold ``must`` of ``groups`` (each group the tokens whose postings
        together are one join word's or gram's) whose ``weights`` sum to ``need``.

        The rarest groups are probed first: the *prefix* (a slot holding none of it cannot
        reach ``must`` or ``need`` with the rest), then more while their postings stay short,
        and a slot is kept only if what it holds of the probed groups plus every unprobed one
        could still reach both bounds."""
        df = self.frequencies(t for group in groups for t in group)
        sizes = [sum(df[t] for t in group) for group in groups]
        order = sorted(range(len(groups)), key=lambda k: (sizes[k], groups[k]))
        rest_weight = sum(weights)
        prefix = len(groups) - must + 1
        for position, k in enumerate(order):
            if rest_weight < need:
                prefix = min(prefix, position)
                break
            rest_weight -= weights[k]
        parts: list[IntArray] = []
        shares: list[IntArray] = []
        read = 0
        probed = 0
        for position, k in enumerate(order):
            if position >= prefix and read + sizes[k] > budget:
                break
            lists = [self.postings(t) for t in groups[k]]
            slots = lists[0] if len(lists) == 1 else np.unique(np.concatenate(lists))
            parts.append(slots)
            shares.append(np.full(len(slots), k, dtype=np.int64))
            read += len(slots)
            probed += 1
        if not parts:
            return np.zeros(0, dtype=np.int64)
        unprobed = order[probed:]
        slots = np.concatenate(parts)
        span = max(len(self.grams), int(slots.max()) + 1)
        counts = np.bincount(slots, minlength=span)  # dense: cheaper than sorting the slots
        keep = (counts > 0) & (counts + len(unprobed) >= must)
        if need > 0:
            held = np.asarray(weights)[np.concatenate(shares)]
            weight = np.bincount(slots, weights=held, minlength=span)
            keep &= weight + sum(weights[k] for k in unprobed) >= need
        out: IntArray = np.flatnonzero(keep)
        return out

    def word_idf(self, words: Iterable[str]) -> dict[str, float]:
        """Smoothed IDF of each join word over the indexed entries (its tokens' frequencies
        summed): ``log((1 + n) / (1 + df)) + 1``, the paraphrase pass's formula."""
        groups = {w: self.word_tokens(w) for w in words}
        df = self.frequencies(t for group in groups.values() for t in group)
        n = self.count
        return {
            w: math.log((1.0 + n) / (1.0 + sum(df[t] for t in group))) + 1.0
            for w, group in groups.items()
        }

    def bigram_candidates(self, lesson: str, threshold: float) -> IntArray:
        """Active slots whose lesson may reach word-bigram Jaccard ``threshold`` with ``lesson``
        (a superset: see the module's docstring)."""
        grams = word_bigrams(lesson)
        size = len(grams)
        if size == 0:
            return self.empty()
        tokens = sorted({gram_token(g) for g in grams})
        needed = max(1, math.ceil(threshold * size - _EPS))
        must = max(1, needed - (size - len(tokens)))
        found = self._probe([[t] for t in tokens], must, [0.0] * len(tokens), 0.0, GRAM_POSTINGS)
        found = found[found < len(self.grams)]
        low = max(1, math.ceil(threshold * size - _EPS))
        high = math.floor(size / threshold + _EPS)
        sizes = self.grams[found]
        keep = self.active[found] & (sizes >= low) & (sizes <= high)
        out: IntArray = found[keep]
        return out

    def paraphrase_candidates(self, lesson: str, jaccard: float, cosine: float) -> IntArray:
        """Active slots whose lesson may reach term Jaccard ``jaccard`` *and* IDF-weighted
        term cosine ``cosine`` (IDF of :meth:`word_idf`) with ``lesson``: a slot sharing none
        of the rarest words cannot reach the cosine, since what the other words can add is at
        most the norm of their weights in ``lesson``'s vector (Cauchy-Schwarz)."""
        words = sorted(set(RUN.findall(term_text(lesson))))
        if not words:
            return np.zeros(0, dtype=np.int64)
        must = max(1, math.ceil(jaccard * len(words) - _EPS))
        idf = self.word_idf(words)
        weights = [idf[w] ** 2 for w in words]
        need = cosine * cosine * sum(weights) * (1.0 - 1e-9)
        found = self._probe([self.word_tokens(w) for w in words], must, weights, need)
        found = found[found < len(self.grams)]
        out: IntArray = found[self.active[found]]
        return out

    def template_candidates(self, lesson: str) -> IntArray:
        """Active slots that may have ``lesson``'s template key (``[]`` if it has none)."""
        for template in TEMPLATES:
            match = template.pattern.match(lesson)
            if match is None:
                continue
            words = {w for field in match.groups() for w in RUN.findall(term_text(field))}
            if not words:  # fields without a term ("-"): the template's own words, rarest
                fixed = list(lesson)
                for k in range(1, len(match.groups()) + 1):
                    fixed[match.start(k) : match.end(k)] = " " * (match.end(k) - match.start(k))
                words = set(RUN.findall(term_text("".join(fixed))))
                if not words:
                    return np.flatnonzero(self.active)
                groups = [self.word_tokens(w) for w in sorted(words)]
                found = self._probe(groups, 1, [0.0] * len(groups), 0.0)
                found = found[found < len(self.grams)]
                fallback: IntArray = found[self.active[found]]
                return fallback
            groups = [self.word_tokens(w) for w in sorted(words)]
            found = self._probe(groups, len(words), [0.0] * len(groups), 0.0)
            found = found[found < len(self.grams)]
            out: IntArray = found[self.active[found]]
            return out
        return np.zeros(0, dtype=np.int64)


def open_reader(path: Path) -> IndexReader | None:
    """The store's index, current, when one exists (nightly runs never build one)."""
    if not sidecar_path(path).exists():
        return None
    try:
        index = FileIndex.open(path)
    except (OSError, sqlite3.Error):
        return None
    return None if index is None else IndexReader(index)


def close(reader: IndexReader) -> None:
    with contextlib.suppress(sqlite3.Error):
        reader.index.close()
