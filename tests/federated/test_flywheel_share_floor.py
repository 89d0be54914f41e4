"""Under injection a learning needs :data:`FLYWHEEL_SHARE` of a task's words, more than a
knowledge entry or a memory note needs: a long topical learning holds two words of most short
unrelated tasks (issue 26). Real files, lexical retrieval (word share alone), no Redis."""

from __future__ import annotations

from pathlib import Path

from swarmq.federated.finding import Store
from swarmq.federated.inject import prepare
from swarmq.federated.search import FLYWHEEL_SHARE, injection_floors
from swarmq.federated.stores import Stores
from swarmq.flywheel.lookup import words
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.storage.locking import LocalLocks

LEARNING = (
    "# Accuracy false-positive tracking\n\n"
    "Every fix of a false positive records the site, the check module and the regression "
    "fixture, so the accuracy gate replays it before a release.\n"
)
TWO_OF_FIVE = "Fix bash escaping in release tooling"
THREE_OF_FIVE = "Fix false positive in release tooling"


def make_stores(root: Path) -> Stores:
    learnings = root / ".agents" / "learnings"
    learnings.mkdir(parents=True)
    (learnings / "accuracy-fp-tracking.md").write_text(LEARNING, encoding="utf-8")
    (root / ".swarm").mkdir()
    knowledge = KnowledgeStore(
        root / ".swarm",
        locks=LocalLocks(root / "locks"),
        config=KnowledgeConfig(retrieval=Retrieval.LEXICAL),
        data_dir=root / "data",
        project_name="share-floor",
    )
    return Stores(root, knowledge, AgentsLayout(root / ".agents"))


def share(task: str) -> float:
    wanted = words(task)
    return len(wanted & words(LEARNING)) / len(wanted)


def shown(stores: Stores, task: str) -> list[Store]:
    return [f.finding.store for f in prepare(stores, QueryContext(text=task)).shown]


def test_the_flywheel_floor_is_its_own_and_memory_keeps_the_knowledge_floor() -> None:
    floors = injection_floors(KnowledgeConfig())
    assert floors.flywheel == FLYWHEEL_SHARE > KnowledgeConfig().inject_min_relevance
    assert floors.memory == KnowledgeConfig().inject_min_relevance
    raised = injection_floors(KnowledgeConfig(inject_min_relevance=0.6))
    assert raised.flywheel == raised.memory == 0.6


def test_two_words_of_five_no_longer_inject_a_learning(tmp_path: Path) -> None:
    assert KnowledgeConfig().inject_min_relevance <= share(TWO_OF_FIVE) < FLYWHEEL_SHARE
    assert share(THREE_OF_FIVE) >= FLYWHEEL_SHARE
    stores = make_stores(tmp_path)
    assert Store.LEARNING not in shown(stores, TWO_OF_FIVE)
    assert Store.LEARNING in shown(stores, THREE_OF_FIVE)
