"""Entry vectors off the query path: with a slow model a query embeds the few entries added
since the last catch-up and none of a backlog (it ranks those by their words, never waiting); the background fill
embeds them in bounded batches into the persisted index, where a fresh search and a loaded store
both find them; an added entry and a lost vector file are caught up by the next fill."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from swarmq.knowledge._dense import INLINE_ENTRIES
from swarmq.knowledge.config import Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, dense_index, search
from swarmq.knowledge.vectors import fill, missing
from swarmq.similarity.embedding import Vectors
from swarmq.similarity.static_embedder import StaticEmbedder, default_embedder
from tests.knowledge.test_ftsindex import lines, stores  # noqa: F401 (fixture)
from tests.knowledge.test_vecindex import HYBRID, vector_files

ONLY_MEANING = QueryContext(text="cap the bytes a peer may send over one socket frame")


class SlowModel:
    """The static model declaring itself slow (as MiniLM does), counting what it embeds."""

    slow = True

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


def with_model(
    make: Callable[..., KnowledgeStore], model: SlowModel, **config: object
) -> KnowledgeStore:
    plain = make(**{**HYBRID, **config})
    return KnowledgeStore(
        plain.swarm_dir,
        locks=plain.locks,
        config=plain.config,
        data_dir=plain.data_dir,
        project_name=plain.project_name,
        embedder=model,
    )


def test_a_query_embeds_only_a_few_entries_and_never_waits_for_the_backlog(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    model = SlowModel()
    knowledge = with_model(stores, model)
    assert missing(knowledge) == {"swarm": None, "hive": None}  # no vectors yet
    lexical = search(knowledge, QueryContext(text="Supabase migrations"), limit=3)
    assert lexical, "entries without a vector are still ranked by their words"
    assert model.embedded == 1  # the query: a backlog is never embedded on the query path
    search(knowledge, QueryContext(text="Supabase migrations"), limit=3)
    assert model.embedded == 2  # nor on the next query
    waiting = missing(knowledge)
    assert waiting["swarm"] and waiting["swarm"] > 200 and waiting["hive"]
    assert knowledge.swarm.tier_file.mirror.state is None

    model.embedded = 0
    report = fill(knowledge, limit=50, batch=20)
    assert sum(report.embedded.values()) == model.embedded == 50 and not report.done
    assert report.missing["swarm"] == waiting["swarm"] - 50

    report = fill(knowledge)
    assert report.done and missing(knowledge) == {"swarm": 0, "hive": 0}
    found = search(knowledge, ONLY_MEANING, limit=3)
    assert found and found[0].breakdown["relevance"] == 0.0
    assert "websockets" in found[0].entry.lesson


def test_a_loaded_store_looks_the_filled_vectors_up_instead_of_embedding(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    assert fill(with_model(stores, SlowModel())).done
    model = SlowModel()
    loaded = with_model(stores, model, persistent_index=False)
    found = search(loaded, ONLY_MEANING, limit=3)
    assert loaded.swarm.tier_file.mirror.state is not None
    assert model.embedded == 1  # the query only
    assert found and "websockets" in found[0].entry.lesson


def test_an_added_entry_and_a_lost_vector_file_are_filled_by_the_next_fill(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    knowledge = with_model(stores, SlowModel())
    assert fill(knowledge).done
    swarm: Path = knowledge.swarm.files.knowledge
    model = SlowModel()
    knowledge = with_model(stores, model)
    with swarm.open("a") as out:  # a few added: the next query embeds them itself
        out.write("\n".join(lines(3, knowledge.swarm.tier, 8)) + "\n")
    search(knowledge, QueryContext(text="Supabase migrations"), limit=3)
    assert model.embedded == 3 + 1 and missing(knowledge)["swarm"] == 0
    with swarm.open("a") as out:  # more than a query embeds: all left to the fill
        out.write("\n".join(lines(INLINE_ENTRIES + 5, knowledge.swarm.tier, 9)) + "\n")
    search(knowledge, QueryContext(text="Supabase migrations"), limit=3)
    assert model.embedded == 3 + 2 and missing(knowledge)["swarm"] == INLINE_ENTRIES + 5
    assert fill(knowledge).embedded["swarm"] == INLINE_ENTRIES + 5
    (vectors,) = vector_files(knowledge)
    vectors.unlink()  # lost: the index's check finds it and the vectors are rebuilt
    model = SlowModel()
    again = with_model(stores, model)
    search(again, QueryContext(text="Supabase migrations"), limit=3)
    assert model.embedded == 1 and missing(again)["swarm"]
    assert fill(again).done and missing(again) == {"swarm": 0, "hive": 0}


def test_lexical_retrieval_fills_nothing(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    knowledge = stores(retrieval=Retrieval.LEXICAL)
    assert fill(knowledge).embedded == {} and missing(knowledge) == {}


def test_a_process_holding_the_store_takes_each_filled_batch_without_embedding_it(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    model = SlowModel()
    knowledge = with_model(stores, model)
    knowledge.swarm.read()  # this process holds the swarm tier (a worker does)
    assert knowledge.swarm.tier_file.mirror.state is not None
    search(knowledge, ONLY_MEANING, limit=3)
    assert model.embedded == 1  # the query only: the backlog waits for the fill
    entries = len(knowledge.swarm.read().entries)

    report = fill(knowledge, limit=100, batch=50)
    assert report.embedded["swarm"] == 100 and model.embedded == 101
    store = knowledge.swarm
    with store.tier_file.mirror.mutex:
        store.tier_file.mirror.refresh()
        held = dense_index(store, model, 0)
    assert len(held.row_of) == 100 and model.embedded == 101  # looked up, not embedded

    assert fill(knowledge).done
    found = search(knowledge, ONLY_MEANING, limit=3)
    assert found and "websockets" in found[0].entry.lesson
    hive = len(knowledge.hive.read().entries)
    assert model.embedded <= 2 + entries + hive  # every entry embedded once, by the fill
