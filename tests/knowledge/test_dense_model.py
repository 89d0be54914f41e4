"""Switching ``knowledge.dense_model``: the packaged transformer's vectors replace the static
model's in the persisted index and the sidecar (never mixed), and a task that shares no word
with its lesson is found through the index as through the whole store once the background
catch-up (:func:`swarmq.knowledge.vectors.fill`) has embedded the entries; ``auto``, the default,
is the transformer wherever its packages are installed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from swarmq.knowledge.config import DENSE_FLOORS, DenseModel, KnowledgeConfig, installed_model
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.knowledge.vectors import fill
from swarmq.similarity.onnx_embedder import OnnxEmbedder
from swarmq.similarity.packaged import packaged_embedder
from tests.knowledge.test_ftsindex import lines, stores  # noqa: F401 (fixture)
from tests.knowledge.test_vecindex import HYBRID, answers, through_index, vector_files, whole

MINILM = {"dense_model": DenseModel.MINILM}


def test_auto_is_the_transformer_where_its_packages_are_installed() -> None:
    # the dev extra installs the minilm extra, so the default here is the transformer
    assert installed_model() == DenseModel.MINILM
    config = KnowledgeConfig()
    assert config.dense_model == DenseModel.AUTO and config.model == DenseModel.MINILM
    assert config.dense_floor == DENSE_FLOORS[DenseModel.MINILM]
    assert KnowledgeConfig(dense_model=DenseModel.WORDLLAMA).dense_floor == 0.33


def filled_through_index(make: Callable[..., KnowledgeStore]) -> list[list[tuple[object, ...]]]:
    """The transformer's answers through the index after the background catch-up."""
    knowledge = make(**{**HYBRID, **MINILM})
    report = fill(knowledge)
    assert report.done and sum(report.embedded.values()) > 0
    found = answers(knowledge)
    assert knowledge.swarm.tier_file.mirror.state is None, "the store was loaded"
    assert len(vector_files(knowledge)) == 1
    return found  # type: ignore[return-value]


def test_the_transformer_reads_meaning_the_static_model_misses() -> None:
    model = packaged_embedder("minilm")
    assert isinstance(model, OnnxEmbedder) and model.dim == 384
    task, lesson, other = model.embed(
        [
            "Store the SQLite database file in the app data directory",
            "Use app.getPath('userData') for files the Electron app writes",
            "Bake bread at 220 degrees for 30 minutes",
        ]
    )
    assert np.allclose([np.linalg.norm(v) for v in (task, lesson, other)], 1.0, atol=1e-5)
    assert task @ lesson >= DENSE_FLOORS[DenseModel.MINILM] > task @ other
    # one text alone or among others: the same vector (no padded batches)
    assert np.allclose(model.embed(["Bake bread at 220 degrees for 30 minutes"])[0], other)


def test_switching_the_model_rebuilds_the_vectors_and_back(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    static = through_index(stores)
    (static_file,) = vector_files(stores())
    transformer = filled_through_index(stores)
    (minilm_file,) = vector_files(stores())
    assert minilm_file != static_file
    assert minilm_file.stat().st_size % (4 * 384) == 0
    # the whole store, loaded, looks the filled rows up instead of embedding them
    assert transformer == whole(stores, **MINILM)
    assert transformer != static
    cosines = [c for found in transformer for *_, c in found if c is not None]
    assert len(cosines) >= 10, "the dense part took no part in the answers"
    assert through_index(stores) == static  # back: rebuilt again, same answers as before
    sidecar = stores().swarm.files.knowledge.with_name("knowledge.embeddings.npz")
    if sidecar.exists():
        with np.load(sidecar) as data:
            assert str(data["model"]) in {
                "wordllama-l2-supercat-256",
                packaged_embedder("minilm").name,
            }


def test_a_lexical_miss_is_found_by_the_transformer(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    knowledge = stores(retrieval="hybrid", **MINILM)
    assert fill(knowledge).done
    found = search(
        knowledge, QueryContext(text="cap the bytes a peer may send over one socket frame"), 3
    )
    assert found and found[0].breakdown["relevance"] == 0.0
    assert found[0].breakdown["cosine"] >= knowledge.config.dense_floor == 0.30
    assert "websockets" in found[0].entry.lesson
    assert answers(knowledge)  # the whole query set runs on the transformer


def test_vectors_the_float32_model_made_are_refilled_under_the_quantised_one(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    """Stored vectors are kept under the embedder's name: those the packaged model run as
    shipped made (float32 compute, the name vectors had before the quantised copy) are never
    mixed with the quantised model's: every entry is embedded again, once."""
    from swarmq.similarity.onnx_embedder import PACKAGED_NAME, _model_file
    from swarmq.similarity.quantized import NAME

    current = stores(**{**HYBRID, **MINILM})
    shipped = KnowledgeStore(
        current.swarm_dir,
        locks=current.locks,
        config=current.config,
        data_dir=current.data_dir,
        project_name=current.project_name,
        embedder=OnnxEmbedder(_model_file()),
    )
    assert shipped.embedder is not None and shipped.embedder.name == PACKAGED_NAME
    old = fill(shipped)
    assert old.done and sum(old.embedded.values()) > 0
    assert current.embedder is not None and current.embedder.name == NAME
    new = fill(stores(**{**HYBRID, **MINILM}))
    assert new.done and new.embedded == old.embedded
    assert sum(fill(stores(**{**HYBRID, **MINILM})).embedded.values()) == 0
