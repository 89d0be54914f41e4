"""The query's meaning for learnings, patterns and memory is embedded, and its model loaded, only
when a record is measured against it (issue 28): a workspace with none of those records never
pays for the packaged WordLlama (~33 MB of a resident hook server, and a query embedding per
request), and where records are there the answers are those of the query embedded at once.
Real files and the real packaged model."""

from __future__ import annotations

from pathlib import Path

from swarmq.federated.meaning import DENSE_FLOORS, WORDLLAMA, Meaning, packaged_meaning
from swarmq.federated.stores import Stores, ask_flywheel, ask_memory
from swarmq.flywheel.store import AgentsLayout
from swarmq.profiles.search import MemorySearch
from swarmq.similarity.embedding import Embedder
from swarmq.similarity.static_embedder import default_embedder
from tests.federated.test_meaning_ranking import LEARNING_TASK, NOTE_TASK, Counting, make_stores


class Loads:
    """A model loader that counts its calls (the packaged model, counting what it embeds)."""

    def __init__(self) -> None:
        self.model = Counting(default_embedder())
        self.count = 0

    def __call__(self) -> Embedder:
        self.count += 1
        return self.model


def test_no_record_to_measure_loads_no_model_and_embeds_nothing(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "shared").mkdir()
    stores = Stores(
        tmp_path,
        None,
        AgentsLayout(tmp_path / ".agents"),
        MemorySearch(tmp_path / "profiles", tmp_path / "shared"),
    )
    loads = Loads()
    meaning = packaged_meaning(WORDLLAMA, loads, NOTE_TASK)
    assert meaning is not None and meaning.name == WORDLLAMA
    assert meaning.floors == DENSE_FLOORS[WORDLLAMA]
    assert ask_flywheel(stores, LEARNING_TASK, 5, 0.45, meaning=meaning) == []
    assert ask_memory(stores, NOTE_TASK, 5, 0.3, meaning=meaning) == []
    assert loads.count == 0 and loads.model.calls == []


def test_records_are_answered_as_with_the_query_embedded_at_once(tmp_path: Path) -> None:
    stores = make_stores(tmp_path)
    model = default_embedder()
    for task in (NOTE_TASK, LEARNING_TASK):
        eager = Meaning(model, model.embed([task])[0], DENSE_FLOORS[WORDLLAMA])
        loads = Loads()
        later = packaged_meaning(WORDLLAMA, loads, task)
        assert later is not None
        for meaning in (eager, later):  # the eager one first: record vectors cached alike
            assert meaning.name == model.name
        assert ask_memory(stores, task, 5, 0.3, meaning=later) == ask_memory(
            stores, task, 5, 0.3, meaning=eager
        )
        assert ask_flywheel(stores, task, 5, 0.45, meaning=later) == ask_flywheel(
            stores, task, 5, 0.45, meaning=eager
        )
        assert loads.count == 1  # loaded once, when the first record was measured
        assert [task] in loads.model.calls
        assert (later.vector == eager.vector).all()


def test_an_empty_text_has_no_meaning() -> None:
    assert packaged_meaning(WORDLLAMA, Loads(), "  ") is None
    assert packaged_meaning("a-model-with-no-floors", Loads(), "a task") is None
