"""The packaged embedding models by name, one loaded copy of each per process.

Hybrid retrieval names its model in settings (``knowledge.dense_model``); the model is loaded
the first time a query needs it, so a command that never ranks anything never pays for it, and
a process that serves many stores holds one copy.
"""

from __future__ import annotations

import threading

from swarmq.similarity.embedding import Embedder

_loaded: dict[str, Embedder] = {}
_lock = threading.Lock()


def packaged_embedder(model: str) -> Embedder:
    """The process's copy of packaged model ``model`` (``wordllama`` or ``minilm``)."""
    if model == "wordllama":
        from swarmq.similarity.static_embedder import default_embedder

        return default_embedder()
    if model != "minilm":
        raise ValueError(f"unknown packaged embedding model {model!r}: use wordllama or minilm")
    with _lock:
        embedder = _loaded.get(model)
        if embedder is None:
            from swarmq.similarity.onnx_embedder import OnnxEmbedder

            embedder = _loaded[model] = OnnxEmbedder()
        return embedder
