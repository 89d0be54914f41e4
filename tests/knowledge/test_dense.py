"""Hybrid retrieval: the packaged model, the per-store vector sidecar, and dense relevance."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from swarmq.knowledge._dense import DenseIndex, sidecar_path
from swarmq.knowledge.config import Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, dense_index, search
from swarmq.similarity.embedding import Vectors
from swarmq.similarity.static_embedder import StaticEmbedder, default_embedder
from tests.knowledge.test_relevance import LESSONS, seeded


class CountingEmbedder:
    """The packaged model, counting how many texts it was asked to embed."""

    def __init__(self) -> None:
        self.inner: StaticEmbedder = default_embedder()
        self.embedded = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded += len(texts)
        return self.inner.embed(texts)


def test_the_packaged_model_loads_offline_and_returns_unit_vectors() -> None:
    vectors = default_embedder().embed(["Wrap localStorage in try/catch", "", "用 try/catch"])
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms[[0, 2]], 1.0, atol=1e-5) and norms[1] == 0.0


def test_a_paraphrased_task_reaches_its_lesson_only_through_the_dense_score(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    task = QueryContext(text="Cap the payload size accepted from each socket peer")
    lexical = seeded(make_knowledge, retrieval=Retrieval.LEXICAL)
    assert search(lexical, task) == []
    hybrid = lexical.with_config(lexical.config.model_copy(update={"retrieval": Retrieval.HYBRID}))
    found = search(hybrid, task)
    assert found and found[0].entry.lesson == LESSONS[3]
    assert found[0].breakdown["cosine"] >= hybrid.config.dense_floor


def test_an_unrelated_task_still_gets_nothing(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = seeded(make_knowledge)
    assert search(knowledge, QueryContext(text="Compose a sonnet about autumn leaves")) == []


def test_vectors_are_cached_in_a_sidecar_and_a_new_process_embeds_only_new_entries(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = seeded(make_knowledge)
    for n in range(80):
        knowledge.add_lesson(f"Pin tool number {n} to version {n}.{n} in the lockfile")
    first = CountingEmbedder()
    store = knowledge.swarm
    with store.tier_file.mirror.mutex:
        store.tier_file.mirror.refresh()
        dense_index(store, first)
    assert first.embedded == len(store.read().entries)
    assert sidecar_path(store.files.knowledge).is_file()

    knowledge.add_lesson("Always close the ONNX session before the worker exits")
    second = CountingEmbedder()  # a new process: a new index over the same files
    fresh = DenseIndex(second, sidecar_path(store.files.knowledge))
    for slot, entry in enumerate(store.read().entries):
        fresh.on_add(slot, entry)
    fresh.catch_up()
    assert second.embedded == 1


def test_a_corrupt_sidecar_is_rebuilt(make_knowledge: Callable[..., KnowledgeStore]) -> None:
    knowledge = seeded(make_knowledge)
    sidecar = sidecar_path(knowledge.swarm.files.knowledge)
    sidecar.write_bytes(b"not a zip file")
    found = search(knowledge, QueryContext(text="Bound the size of websocket client messages"))
    assert found and found[0].entry.lesson == LESSONS[3]


def test_dense_pairs_finds_every_pair_above_the_threshold_across_blocks() -> None:
    from swarmq.consolidation import _paraphrase

    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    vectors[31] = vectors[3]
    vectors[48] = vectors[3] * 2
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    block = _paraphrase.DENSE_BLOCK
    _paraphrase.DENSE_BLOCK = 16  # several blocks, pairs crossing them
    try:
        left, right, cosines = _paraphrase.dense_pairs(vectors, 0.999)
    finally:
        _paraphrase.DENSE_BLOCK = block
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == [(3, 31), (3, 48), (31, 48)]
    assert np.all(cosines >= 0.999)
