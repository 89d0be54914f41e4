"""A file of vectors keyed by the content of the text each was computed from.

Retrieval's entry vectors (:mod:`swarmq.knowledge._dense`) and consolidation's multilingual
vectors (:mod:`swarmq.consolidation._mlvectors`) are derived data kept beside a store: an
``.npz`` of the model's name, 16-byte content keys
(:func:`~swarmq.similarity.embedding.content_key`) and one row per key. A vector is only used
for the very text it came from, so the store stays the authority; a missing, damaged (the zip's
CRC), other model's or malformed file reads as empty and its owner rebuilds it. Written
atomically and without fsync (derived data).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from swarmq.similarity.embedding import Vectors
from swarmq.storage.atomic import write_atomic

KEY_BYTES = 16


def read_vectors(path: Path, model: str, dim: int) -> dict[bytes, np.ndarray]:
    """The file's float32 vectors by content key; ``{}`` when it is missing or untrusted."""
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, rows, name = data["keys"], data["vectors"], data["model"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return {}
    if (
        str(name) != model
        or keys.dtype != np.uint8
        or keys.shape != (len(rows), KEY_BYTES)
        or not np.issubdtype(rows.dtype, np.floating)
        or rows.shape != (len(keys), dim)
        or not np.isfinite(rows).all()
    ):
        return {}
    rows = rows.astype(np.float32, copy=False)
    return {bytes(key): row for key, row in zip(keys, rows, strict=True)}


def write_vectors(path: Path, model: str, keys: Sequence[bytes], rows: Vectors) -> None:
    """Replace the file with ``rows`` (one per key, in the dtype given) under ``model``."""
    buffer = io.BytesIO()
    np.savez(
        buffer,
        model=np.asarray(model),
        keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES),
        vectors=rows,
    )
    write_atomic(path, buffer.getvalue(), durable=False)
