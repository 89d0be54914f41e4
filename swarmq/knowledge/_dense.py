"""A store's entry vectors: computed once per entry text, cached by content hash in a sidecar.

The index listens to the store's mirror like the lexical one, but an add only notes the slot:
vectors are computed in one batch when a query first needs them (:meth:`DenseIndex.catch_up`),
so adding an entry never waits on the model. A slow model (MiniLM: ~28 ms of CPU per entry)
embeds at most :func:`inline_limit` entries there; the others are ranked by their words until a
background catch-up (:mod:`swarmq.knowledge.vectors`) has put their vectors in the persisted
index, where the next query finds them (:func:`~swarmq.knowledge._vecindex.lookup`). Vectors already in the sidecar
(``<store>.embeddings.npz`` next to the store file, keyed by the SHA-256 of the embedded text and
the model's name) are reused, so a new process embeds only the entries it has not seen; the
sidecar is rewritten, atomically and without fsync (it is derived data), when a catch-up had to
embed many entries, and a missing, corrupt or other-model sidecar is simply rebuilt.

Machine-written notes from a template (co-change notes: "Files A and B co-change …") get no
vector: their content is their fields, file names the lexical index matches exactly, and their
vectors, made of little but path words, sit near any task that mentions the same kind of file
("draw the logo as an SVG" near every ``*.svg`` note).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from swarmq.knowledge.model import Entry
from swarmq.knowledge.templates import template_key
from swarmq.similarity.embedding import Embedder, Vectors, content_key
from swarmq.similarity.vectorfile import read_vectors, write_vectors

SAVE_MIN_NEW = 64
"""Rewrite the sidecar only when a catch-up embedded at least this many entries: a few new
entries are re-embedded by the next process in well under a millisecond, while the sidecar of a
10k store is megabytes."""
EMBED_BATCH = 1024
"""Texts embedded per call when a store is first indexed: bounds the tokenizer's transient
memory."""


INLINE_ENTRIES = 8
"""Entries a query embeds itself with a slow model (one that declares ``slow = True``: MiniLM,
~28 ms of CPU each, so at most ~0.2 s): the few added since the last catch-up. When more wait
(a backlog: a new store, a switched model, a burst of adds) it embeds none of them and leaves
them all to the background catch-up, so no query pays for a backlog, however many queries
come before it is filled."""


def inline_limit(embedder: Embedder) -> int | None:
    """How many entries a query may embed on its own path: all (``None``) for a fast model
    (WordLlama: 20k entries in about a second), :data:`INLINE_ENTRIES` for a slow one."""
    return INLINE_ENTRIES if getattr(embedder, "slow", False) else None


Lookup = Callable[[Path, Embedder, set[bytes], object], tuple[dict[bytes, Vectors], object]]
"""The vectors a persisted index holds for some content keys, and the state of its vectors
looked at (``_vecindex.lookup``)."""


def sidecar_path(store_file: Path) -> Path:
    return store_file.with_name(f"{store_file.stem}.embeddings.npz")


def dense_text(entry: Entry) -> str:
    """What an entry's vector is made of: the same text the lexical index reads."""
    return " ".join([entry.lesson, *entry.strings("triggers"), *entry.tags])


def vector_text(entry: Entry) -> str | None:
    """The text embedded for ``entry``, ``None`` for a template note (no vector)."""
    return None if template_key(entry.lesson) is not None else dense_text(entry)


def at_sidecar_precision(vectors: Vectors) -> Vectors:
    """Vectors rounded to the float16 the sidecars store: a process that embedded an entry
    then scores it exactly as one that read its vector back (the persisted index included)."""
    rounded: Vectors = vectors.astype(np.float16).astype(np.float32)
    return rounded


def candidate_cosines(
    cosines: Vectors,
    slot_of_row: npt.NDArray[np.int64],
    rows_of: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.int64]],
    text: Iterable[int],
    take: int,
) -> dict[int, float]:
    """Hybrid retrieval's dense candidates, whatever holds the vectors: the cosine of the
    ``take`` rows nearest the query and of every lexical hit in ``text`` that has a vector
    (``cosines`` by row, ``-inf`` for a row with no entry; ``slot_of_row`` -1 there)."""
    if not bool((slot_of_row >= 0).any()):
        return {}
    take = min(take, len(cosines))
    nearest = np.argpartition(-cosines, take - 1)[:take]
    out = {int(slot_of_row[r]): float(cosines[r]) for r in nearest if slot_of_row[r] >= 0}
    slots = np.fromiter(text, dtype=np.int64)
    if len(slots):
        rows = rows_of(slots)
        have = rows >= 0
        out.update(zip(slots[have].tolist(), cosines[rows[have]].tolist(), strict=True))
    return out


class DenseIndex:
    """Unit vectors by slot, in one matrix so a query is one matrix-vector product."""

    def __init__(
        self,
        embedder: Embedder,
        sidecar: Path,
        index: Path | None = None,
        lookup: Lookup | None = None,
    ) -> None:
        self.embedder = embedder
        self.sidecar = sidecar
        self.index = index
        """The store's persisted index, whose vector rows (filled in the background) are
        looked up (``lookup``: :func:`swarmq.knowledge._vecindex.lookup`) for texts the
        sidecar lacks."""
        self.lookup = lookup
        self.reset()

    def reset(self) -> None:
        self.pending: dict[int, str] = {}
        self.row_of: dict[int, int] = {}
        self.matrix: Vectors = np.zeros((0, self.embedder.dim), dtype=np.float32)
        self.slot_of_row: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.row_for_slot: npt.NDArray[np.int64] = np.full(0, -1, dtype=np.int64)
        """``row_of`` as an array (-1: no vector), for looking up many slots at once."""
        self.keys: list[bytes] = []
        self.free: list[int] = []
        self._cache: dict[bytes, Vectors] | None = None
        self._sidecar_read = False
        """The sidecar is read once per build: later catch-ups are a few new entries."""
        self._index_stamp: object = None
        """The persisted index file's state when its vectors were last looked up (looked up
        again only once it changed)."""
        self._vectors_seen: object = None
        """Which vector rows that look saw (file and row count: rows are only appended)."""

    # -- mirror events ------------------------------------------------------------------------

    def on_add(self, slot: int, entry: Entry) -> None:
        text = vector_text(entry)
        if text is not None:
            self.pending[slot] = text

    def on_remove(self, slot: int, entry: Entry) -> None:
        self.pending.pop(slot, None)
        row = self.row_of.pop(slot, None)
        if row is not None:
            self.row_for_slot[slot] = -1
            self.matrix[row] = 0.0
            self.slot_of_row[row] = -1
            self.free.append(row)

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None:
        if slot in self.row_of and dense_text(new) == dense_text(old):
            return
        self.on_remove(slot, old)
        self.on_add(slot, new)

    # -- vectors ------------------------------------------------------------------------------

    def catch_up(self, limit: int | None = None, all_or_none: bool = False) -> int:
        """Give the noted slots their vectors (sidecar and persisted index first, the model for
        the rest, at most ``limit`` texts of it, or with ``all_or_none`` none at all when more
        than ``limit`` need it; slots left stay noted, without a vector); returns how many
        texts the model embedded."""
        if not self.pending:
            return 0
        cache = self._load_cache()
        slots = list(self.pending)
        texts = [self.pending[s] for s in slots]
        keys = [content_key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in cache]
        if missing and self.index is not None and self.lookup is not None:
            found = self._look_up({keys[i] for i in missing})
            if found:
                cache.update(found)
                missing = [i for i in missing if keys[i] not in cache]
        if limit is not None and len(missing) > limit:
            cut = 0 if all_or_none else limit
            waiting = set(missing[cut:])
            missing = missing[:cut]
            chosen = [i for i in range(len(slots)) if i not in waiting]
            slots = [slots[i] for i in chosen]
            keys = [keys[i] for i in chosen]
            texts = [texts[i] for i in chosen]
            renumber = {old: new for new, old in enumerate(chosen)}
            missing = [renumber[i] for i in missing]
        fresh = (
            np.vstack(
                [
                    self.embedder.embed([texts[i] for i in missing[lo : lo + EMBED_BATCH]])
                    for lo in range(0, len(missing), EMBED_BATCH)
                ]
            )
            if missing
            else None
        )
        vectors = np.zeros((len(slots), self.embedder.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            hit = cache.get(key)
            if hit is not None:
                vectors[i] = hit
        if fresh is not None:
            vectors[missing] = at_sidecar_precision(fresh)
        self._place(slots, keys, vectors)
        for slot in slots:
            del self.pending[slot]
        if len(missing) >= SAVE_MIN_NEW:
            self.save()
        if not self.pending:
            self._cache = None  # the rows now hold every vector the store needs
        return len(missing)

    def _look_up(self, keys: set[bytes]) -> dict[bytes, Vectors]:
        """The vectors of ``keys`` the persisted index holds, when rows were added to it since
        the last look (a background catch-up fills it): one ``stat`` while the index file is
        unchanged, its metadata while no row was added."""
        assert self.index is not None and self.lookup is not None
        try:
            st = self.index.stat()
        except OSError:
            return {}
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._index_stamp:
            return {}
        self._index_stamp = stamp
        found, self._vectors_seen = self.lookup(self.index, self.embedder, keys, self._vectors_seen)
        return found

    def _place(self, slots: list[int], keys: list[bytes], vectors: Vectors) -> None:
        if not slots:
            return
        need = len(slots) - len(self.free)
        if need > 0:
            start = self.matrix.shape[0]
            grow = max(need, start // 2)
            self.matrix = np.vstack(
                [self.matrix, np.zeros((grow, self.embedder.dim), dtype=np.float32)]
            )
            self.slot_of_row = np.concatenate([self.slot_of_row, np.full(grow, -1, np.int64)])
            self.keys.extend([b""] * grow)
            self.free.extend(range(start + grow - 1, start - 1, -1))
        top = max(slots) + 1
        if top > len(self.row_for_slot):
            grown = np.full(max(top, 2 * len(self.row_for_slot)), -1, dtype=np.int64)
            grown[: len(self.row_for_slot)] = self.row_for_slot
            self.row_for_slot = grown
        for slot, key, vector in zip(slots, keys, vectors, strict=True):
            row = self.free.pop()
            self.matrix[row] = vector
            self.slot_of_row[row] = slot
            self.keys[row] = key
            self.row_of[slot] = row
            self.row_for_slot[slot] = row

    def cosines(self, query: Vectors) -> Vectors:
        """Cosine of every row with ``query`` (call after :meth:`catch_up`); free rows get
        ``-inf``. Rows map to slots through ``slot_of_row`` and back through ``row_of``."""
        # einsum, not BLAS: a matrix-vector product is memory-bound, and BLAS threads fighting
        # the worker's own threads on a busy machine made it several times slower.
        out: Vectors = np.einsum("ij,j->i", self.matrix, query.astype(np.float32, copy=False))
        out[self.slot_of_row < 0] = -np.inf
        return out

    def rows(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The row of each slot, -1 for a slot with no vector."""
        inside = slots < len(self.row_for_slot)
        out = np.full(len(slots), -1, dtype=np.int64)
        out[inside] = self.row_for_slot[slots[inside]]
        return out

    # -- sidecar ------------------------------------------------------------------------------

    def _load_cache(self) -> dict[bytes, Vectors]:
        if self._cache is not None:
            return self._cache
        if self._sidecar_read:
            return {}
        self._sidecar_read = True
        self._cache = read_vectors(self.sidecar, self.embedder.name, self.embedder.dim)
        return self._cache

    def save(self) -> None:
        """Write every current vector to the sidecar (derived data: atomic, not fsynced)."""
        used = np.flatnonzero(self.slot_of_row >= 0)
        write_vectors(
            self.sidecar,
            self.embedder.name,
            [self.keys[r] for r in used],
            self.matrix[used].astype(np.float16),
        )
