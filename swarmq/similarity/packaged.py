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
_threads = 1


def run_threads(count: int) -> None:
    """Run the transformer models this process loads from now on on ``count`` threads per text
    (onnxruntime's intra-op threads, which sleep rather than spin while they wait).

    One, the default, suits a process among many (a worker, a CLI call). The resident hook
    server answers one prompt at a time for agents waiting on it, and a new query's embedding
    (~11 ms of a 100k search's ~27 ms on a quiet machine) is its longest step: on two
    threads a new 100k search's p50 fell from 44.9 to 38.0 ms in process (load 5.4-5.7, 80
    texts, the answers the same) for ~3 ms more CPU. The vectors are the same bits on any
    count, so the stores' vectors stay valid."""
    global _threads
    with _lock:
        _threads = max(1, count)


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

            embedder = _loaded[model] = OnnxEmbedder(threads=_threads)
        return embedder
