"""Learnings, patterns, pool candidates and memory notes are ranked by meaning as well as by
words (issue 26): a task worded unlike the learning or note that answers it, sharing under the
injection floor's share of its words, still reaches it through the packaged model's cosine,
while tasks nothing is relevant to stay silent; record vectors are kept per process, so a query
embeds only itself; under ``retrieval: lexical`` nothing changes. Real files, the real packaged
model, no Redis (the stores lock with local locks)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from swarmq.federated.finding import Store
from swarmq.federated.inject import prepare
from swarmq.federated.lookup import lookup
from swarmq.federated.meaning import DENSE_FLOORS
from swarmq.federated.search import injection_floors
from swarmq.federated.stores import Stores, note_text
from swarmq.flywheel.lookup import words
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.profiles.layout import ledger_record
from swarmq.profiles.search import MemorySearch
from swarmq.similarity.embedding import Embedder, Vectors
from swarmq.similarity.static_embedder import default_embedder
from swarmq.storage.locking import LocalLocks

LEARNING = (
    "---\nid: learn-bash-arrows\ntype: learning\nmaturity: established\nutility: 0.6\n---\n"
    "# Learning: Arrow key history bindings on macOS bash\n\n"
    "Bash 3.2, the version macOS ships, ignores bind -x for the arrow key escape sequences, so "
    "the history widget never runs. Check BASH_VERSINFO first and bind readline macros instead "
    "on the old shell.\n"
)
NOTE = (
    "- Telegram bot went quiet after the gateway restart: the webhook was still registered to "
    "the old tunnel URL, re-run setWebhook with the new URL and it answers again."
)
LEARNING_TASK = "fix: arrow keys do not recall history in the mac terminal"
NOTE_TASK = "telegram bot silent since the gateway came back up"
UNRELATED = (
    "Add a gradient logo to the landing page",
    "bake sourdough bread with a longer proof",
    "Update the README badges",
    "rotate the database credentials every quarter",
    "translate the settings page into German",
)


class Counting:
    """The packaged model, recording every batch of texts it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def make_stores(
    root: Path, *, retrieval: Retrieval = Retrieval.HYBRID, embedder: Embedder | None = None
) -> Stores:
    learnings = root / ".agents" / "learnings"
    if not learnings.is_dir():
        learnings.mkdir(parents=True)
        (learnings / "2026-12-01-bash-arrows.md").write_text(LEARNING, encoding="utf-8")
        memory = root / "profiles" / "w1" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text(f"# Memory\n\n{NOTE}\n", encoding="utf-8")
        (root / "shared").mkdir()
        (root / ".swarm").mkdir()
    knowledge = KnowledgeStore(
        root / ".swarm",
        locks=LocalLocks(root / "locks"),
        config=KnowledgeConfig(retrieval=retrieval),
        data_dir=root / "data",
        project_name="meaning",
        embedder=embedder,
    )
    return Stores(
        root,
        knowledge,
        AgentsLayout(root / ".agents"),
        MemorySearch(root / "profiles", root / "shared"),
    )


def shown(stores: Stores, task: str) -> list[tuple[Store, str]]:
    injection = prepare(stores, QueryContext(text=task))
    return [(f.finding.store, f.finding.text) for f in injection.shown]


def share(task: str, text: str) -> float:
    wanted = words(task)
    return len(wanted & words(text)) / len(wanted)


def test_the_tasks_share_too_few_words_for_the_word_floor() -> None:
    """The premise: word share alone keeps both records out of the block."""
    floor = injection_floors(KnowledgeConfig()).flywheel
    assert share(LEARNING_TASK, LEARNING) < floor
    assert share(NOTE_TASK, note_text(NOTE)) < floor
    assert default_embedder().name in DENSE_FLOORS


def test_a_paraphrased_task_reaches_the_learning(tmp_path: Path) -> None:
    found = shown(make_stores(tmp_path), LEARNING_TASK)
    assert found and found[0][0] == Store.LEARNING
    assert "BASH_VERSINFO" in found[0][1]


def test_a_paraphrased_task_reaches_the_memory_note(tmp_path: Path) -> None:
    found = shown(make_stores(tmp_path), NOTE_TASK)
    assert found and found[0][0] == Store.WORKER_MEMORY
    assert "setWebhook" in found[0][1]


@pytest.mark.parametrize("task", UNRELATED)
def test_an_unrelated_task_stays_silent(tmp_path: Path, task: str) -> None:
    assert shown(make_stores(tmp_path), task) == []


def test_lexical_retrieval_matches_on_words_alone(tmp_path: Path) -> None:
    stores = make_stores(tmp_path, retrieval=Retrieval.LEXICAL)
    assert shown(stores, LEARNING_TASK) == []
    assert shown(stores, NOTE_TASK) == []


def test_lookup_ranks_by_meaning_too(tmp_path: Path) -> None:
    found, cited = lookup(make_stores(tmp_path), LEARNING_TASK, session_id="s1", cite=False)
    assert cited == 0
    assert found and found[0].finding.store == Store.LEARNING
    hit = found[0].finding.hit
    assert hit is not None and hit.cosine is not None
    assert hit.cosine >= DENSE_FLOORS[default_embedder().name].flywheel


def test_a_query_embeds_only_itself(tmp_path: Path) -> None:
    counting = Counting(default_embedder())
    stores = make_stores(tmp_path, embedder=counting)
    assert shown(stores, LEARNING_TASK)
    first = [t for call in counting.calls for t in call]
    assert any("BASH_VERSINFO" in t for t in first)  # the records, once
    counting.calls.clear()
    assert shown(stores, NOTE_TASK)
    assert shown(stores, LEARNING_TASK)
    assert {t for call in counting.calls for t in call} == {NOTE_TASK, LEARNING_TASK}


def test_a_changed_memory_file_is_embedded_again(tmp_path: Path) -> None:
    counting = Counting(default_embedder())
    stores = make_stores(tmp_path, embedder=counting)
    assert shown(stores, NOTE_TASK)
    notes = tmp_path / "profiles" / "w1" / "memory" / "MEMORY.md"
    notes.write_text(
        "# Memory\n\n- The staging database refuses connections until the VPN profile is "
        "imported again after a laptop reset.\n",
        encoding="utf-8",
    )
    assert stores.memory is not None
    stores.memory.index.refresh()
    counting.calls.clear()
    assert shown(stores, NOTE_TASK) == []
    embedded = [t for call in counting.calls for t in call]
    assert any("VPN profile" in t for t in embedded)
    assert not any("BASH_VERSINFO" in t for t in embedded)  # the unchanged learning is kept


def _pool_candidate(root: Path, text: str) -> None:
    pending = root / ".agents" / "pool" / "pending"
    pending.mkdir(parents=True)
    (pending / "pend-telegram.json").write_text(
        json.dumps(
            {
                "candidate": {"id": "pend-telegram", "type": "solution", "content": text},
                "scoring_result": {},
                "status": "pending",
                "added_at": "2026-12-01T10:00:00Z",
            }
        ),
        encoding="utf-8",
    )


def test_a_pool_candidate_is_reached_by_its_words_not_by_meaning_alone(tmp_path: Path) -> None:
    """A candidate passed no gate: the note's text as a held candidate stays out of a task that
    reaches the note itself by meaning, and is found once the task holds its words."""
    stores = make_stores(tmp_path)
    text = note_text(NOTE)
    _pool_candidate(tmp_path, text)
    assert (Store.CANDIDATE, text) not in shown(stores, NOTE_TASK)
    assert any(store == Store.WORKER_MEMORY for store, _ in shown(stores, NOTE_TASK))
    worded = "telegram bot gateway restart webhook tunnel setWebhook"
    assert share(worded, text) >= injection_floors(KnowledgeConfig()).flywheel
    assert Store.CANDIDATE in {store for store, _ in shown(stores, worded)}


def test_mission_ledger_records_are_not_reached_by_meaning_alone(tmp_path: Path) -> None:
    """A mission's own SUMMARY.md, events.jsonl and handoff, and their archived copies, echo
    its objective and checkpoints: a later task on the subject is near them in meaning, but
    they are no lessons. The same line written as a memory note is reached."""
    stores = make_stores(tmp_path)
    memory = tmp_path / "profiles" / "w1" / "memory"
    (memory / "MEMORY.md").write_text("# Memory\n\n- ...\n", encoding="utf-8")
    text = note_text(NOTE)
    event = json.dumps({"type": "checkpoint", "summary": text})
    for base in (memory / "missions" / "m-1", tmp_path / "shared" / "swarm" / "missions" / "m-1"):
        base.mkdir(parents=True)
        (base / "SUMMARY.md").write_text(f"# Mission\n\n## Objective\n\n{text}\n", "utf-8")
        (base / "handoff.md").write_text(f"# Handoff\n\n## Objective\n\n{text}\n", "utf-8")
        (base / "events.jsonl").write_text(event + "\n", "utf-8")
    (memory / "episodes").mkdir()
    (memory / "episodes" / "2026-12-01.md").write_text(f"- Summary: {text}\n", "utf-8")
    assert stores.memory is not None
    stores.memory.index.refresh()
    assert shown(stores, NOTE_TASK) == []
    (tmp_path / "shared" / "notes.md").write_text(f"# Shared\n\n{NOTE}\n", encoding="utf-8")
    stores.memory.index.refresh()
    assert [store for store, _ in shown(stores, NOTE_TASK)] == [Store.SHARED_MEMORY]


def test_ledger_record_names_the_mission_machinerys_own_files(tmp_path: Path) -> None:
    profiles, shared = tmp_path / "profiles", tmp_path / "shared"
    ledger = [
        profiles / "w1" / "memory" / "missions" / "m-1" / "SUMMARY.md",
        profiles / "w1" / "memory" / "missions" / "m-1" / "events.jsonl",
        profiles / "w1" / "memory" / "handoffs" / "m-1.md",
        profiles / "w1" / "memory" / "episodes" / "2026-12-01.md",
        shared / "handoffs" / "swarm" / "w1-latest.md",
        shared / "swarm" / "missions" / "m-1" / "handoff.md",
    ]
    notes = [
        profiles / "w1" / "memory" / "MEMORY.md",
        profiles / "w1" / "memory" / "telegram.md",
        profiles / "missions" / "notes.md",  # a worker named "missions" is no ledger
        profiles / "w1" / "missions" / "notes.md",  # outside the profile's memory/
        shared / "notes.md",
        shared / "missions.md",
        tmp_path / "elsewhere" / "swarm" / "x.md",
    ]
    assert all(ledger_record(p, profiles, shared) for p in ledger)
    assert not any(ledger_record(p, profiles, shared) for p in notes)
    # a shared directory inside the profiles one: the nearer root decides
    inner = profiles / "shared"
    assert ledger_record(inner / "swarm" / "missions" / "m-1" / "SUMMARY.md", profiles, inner)
    assert not ledger_record(inner / "notes.md", profiles, inner)


def test_under_minilm_these_stores_are_ranked_on_wordllama_and_its_floors(tmp_path: Path) -> None:
    """MiniLM's own floors for learnings and memory were calibrated and not adopted (they rank
    worse on the held split, and a fresh process would embed every record with MiniLM first):
    the task is embedded with WordLlama for these stores, on WordLlama's floors."""
    from swarmq.federated.meaning import MINILM, NOT_ADOPTED, WORDLLAMA
    from swarmq.federated.search import _meaning
    from swarmq.federated.stores import Floors
    from swarmq.similarity.packaged import packaged_embedder

    stores = make_stores(tmp_path)
    assert stores.knowledge is not None and stores.knowledge.embedder is not None
    assert stores.knowledge.embedder.name == MINILM == packaged_embedder("minilm").name  # default
    assert MINILM in NOT_ADOPTED and MINILM not in DENSE_FLOORS
    meaning = _meaning(stores, LEARNING_TASK, Floors())
    assert meaning is not None and meaning.embedder.name == WORDLLAMA
    assert meaning.floors == DENSE_FLOORS[WORDLLAMA]
