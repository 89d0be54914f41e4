"""The multilingual vectors of a store's lessons, kept in a file beside the store.

The cross-language pass (:mod:`._crosslingual`) needs the vector of every lesson of its scope
(mutual nearest neighbours are taken among them all), and the model costs ~20 ms a lesson: a
fresh nightly process would embed a 5,000-lesson scope for two minutes to judge a handful of new
lessons. So the vectors are kept in ``<store stem>.<model>.npz`` beside the store, keyed by the
16-byte content key of the lesson text (:func:`~swarmq.similarity.embedding.content_key`): a
vector is only ever used for the very text it was computed from, so the store file stays the
authority and an edited lesson simply misses. Whatever run embeds (a full pass or a night)
embeds only the lessons the file lacks and rewrites it with the scope's current lessons (stale
keys dropped). The file's format and its checks are :mod:`swarmq.similarity.vectorfile`'s;
it is written under no store lock (two runs writing at once leave one of two valid files).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from swarmq.similarity.embedding import Embedder, Vectors, content_key
from swarmq.similarity.vectorfile import read_vectors, write_vectors


def vectors_file(store_file: Path, model: str) -> Path:
    """Where the multilingual vectors of ``store_file``'s lessons live."""
    return store_file.with_name(f"{store_file.stem}.{model}.npz")


def _write(path: Path, model: str, vectors: dict[bytes, np.ndarray], dim: int) -> None:
    rows = np.stack(list(vectors.values())) if vectors else np.zeros((0, dim), np.float32)
    with contextlib.suppress(OSError):  # a read-only directory: the next run embeds again
        write_vectors(path, model, list(vectors), rows.astype(np.float32))


class PersistedVectors:
    """An :class:`~swarmq.similarity.embedding.Embedder` that answers from the store's vector
    file, embeds only what it lacks (loading the model only then) and keeps the file equal to
    the last texts it was asked for."""

    def __init__(self, model: Callable[[], Embedder], store_file: Path) -> None:
        self._model = model
        self._store_file = store_file
        self.embedded = 0
        """Texts this instance had to embed (the rest came from the file)."""

    @property
    def name(self) -> str:
        return self._model().name

    @property
    def dim(self) -> int:
        return self._model().dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        inner = self._model()
        name, dim = inner.name, inner.dim
        path = vectors_file(self._store_file, name)
        known = read_vectors(path, name, dim)
        keys = [content_key(text) for text in texts]
        wanted = dict(zip(keys, texts, strict=True))
        missing = [key for key in wanted if key not in known]
        if missing:
            rows = inner.embed([wanted[key] for key in missing])
            known.update(zip(missing, np.asarray(rows, dtype=np.float32), strict=True))
            self.embedded += len(missing)
        if missing or len(known) != len(wanted):
            _write(path, name, {key: known[key] for key in wanted}, dim)
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([known[key] for key in keys]).astype(np.float32, copy=False)
