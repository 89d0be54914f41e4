"""Dense text embeddings: the one interface every embedding model is used through.

Word overlap cannot see that "remember the theme choice across reloads" is about the lesson on
wrapping ``localStorage``; a dense vector can, a little, and together with the lexical score it
finds more than either alone. Retrieval and consolidation depend only on :class:`Embedder`, so a
deployment can plug its own model (an OpenAI-compatible endpoint, :mod:`swarmq.llm.embeddings`)
without the domain layers knowing how vectors are made.

Every vector an embedder returns is L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""``(n, dim)`` float32, each row of unit length (or all zeros for an empty text)."""


class Embedder(Protocol):
    """Turns texts into unit vectors; ``name`` changes whenever the vectors would."""

    @property
    def name(self) -> str:
        """Model identity: vectors cached under another name are never reused."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in order."""
        ...


def content_key(text: str) -> bytes:
    """The cache key of a text's vector: 16 bytes of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


def normalise_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero)."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out
