"""A query's embedding computed beside the lexical work: the embedder's own vector of the text,
computed on the embedding thread, and what the embedding raised is raised where it is needed."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from swarmq.knowledge._ahead import PendingVector
from swarmq.similarity.embedding import Vectors


class Recording:
    name = "recording"
    dim = 3

    def __init__(self) -> None:
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.threads.append(threading.current_thread().name)
        if texts == ["fail"]:
            raise RuntimeError("the model is gone")
        return np.asarray([[len(t), 1.0, 0.5] for t in texts], dtype=np.float32)


def test_the_vector_is_the_embedders_computed_on_the_embedding_thread() -> None:
    embedder = Recording()
    pending = PendingVector(embedder, "pin the lockfile")
    assert pending.embedder is embedder
    assert pending.vector().tobytes() == embedder.embed(["pin the lockfile"])[0].tobytes()
    assert embedder.threads[0].startswith("query-embed")
    assert embedder.threads[1] == threading.current_thread().name


def test_what_the_embedding_raised_is_raised_where_the_vector_is_needed() -> None:
    pending = PendingVector(Recording(), "fail")
    with pytest.raises(RuntimeError, match="the model is gone"):
        pending.vector()
