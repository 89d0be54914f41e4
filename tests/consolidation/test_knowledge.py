"""Merge, supersede and link on a knowledge tier: worked examples, idempotency, dry run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmq.consolidation._events import EventLog
from swarmq.consolidation.config import ConsolidationConfig, EmptyLessons
from swarmq.consolidation.knowledge import consolidate_tier, events_path
from tests.consolidation.support import entries_by_id, entry, open_store, write_store

BASE = "Run the database migrations in a transaction before deploying the api service to production"
NEAR = "Run the database migrations in a transaction before deploying the api service to production now"
CONFLICT = (
    "Run the database migrations in a transaction before deploying the web service to production"
)
COMPLEMENT = (
    "Run the database migrations in a transaction before deploying the web service to staging"
)


def test_duplicate_merge_arithmetic(tmp_path: Path) -> None:
    store = write_store(
        tmp_path,
        [
            entry(
                "a",
                BASE,
                created="2026-01-05T00:00:00.000Z",
                phases=(1, 2),
                tags=["database"],
                outcomes={"applied_count": 2, "succeeded_after_count": 1, "failed_after_count": 0},
            ),
            entry(
                "b",
                NEAR,
                created="2026-01-02T00:00:00.000Z",
                phases=(2, 3),
                tags=["deploy", "database"],
                confidence=0.7,
                outcomes={
                    "applied_count": 3,
                    "succeeded_after_count": 0,
                    "failed_after_count": 1,
                    "shown_count": 4,
                },
            ),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert report.plan.counts()["duplicate"] == 1
    data = entries_by_id(store)
    # Both have two distinct phases; b has the higher confidence, so b is the stronger.
    keep, gone = data["b"], data["a"]
    assert [r["phase_number"] for r in keep["confirmed_by"]] == [1, 2, 3]
    assert keep["retrieval_outcomes"] == {
        "applied_count": 5,
        "succeeded_after_count": 1,
        "failed_after_count": 1,
        "shown_count": 4,
    }
    assert keep["tags"] == ["deploy", "database"]
    assert keep["created_at"] == "2026-01-02T00:00:00.000Z"
    assert keep["confidence"] == 0.8  # 0.5 + 3 x 0.1, auto-generated
    assert keep["lesson"] == NEAR  # more distinct words
    assert keep["supersedes"] == ["a"]
    assert gone["status"] == "archived" and gone["pre_archive_status"] == "candidate"
    assert gone["superseded_by"] == "b" and gone["supersede_reason"] == "duplicate"
    assert gone["lesson"] == BASE  # nothing deleted: the text stays readable
    # Restorable through the store's own restore (archived -> prior status).
    restored = store.swarm.restore("a")
    assert restored.status == "candidate"


def test_conflict_newer_supersedes_older(tmp_path: Path) -> None:
    store = write_store(
        tmp_path,
        [
            entry(
                "old", BASE, created="2026-01-01T00:00:00.000Z", phases=(1, 2, 3), confidence=0.9
            ),
            entry("new", CONFLICT, created="2026-02-01T00:00:00.000Z"),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert report.plan.counts()["conflict"] == 1
    data = entries_by_id(store)
    assert data["new"]["supersedes"] == ["old"]
    assert data["new"]["lesson"] == CONFLICT and data["new"]["status"] == "candidate"
    assert data["old"]["status"] == "archived" and data["old"]["superseded_by"] == "new"
    assert data["old"]["supersede_reason"] == "conflict"


def test_contradiction_supersedes_even_below_conflict(tmp_path: Path) -> None:
    store = write_store(
        tmp_path,
        [
            entry(
                "yes",
                "Always enable strict mode in the typescript config of every package",
                created="2026-01-01T00:00:00.000Z",
            ),
            entry(
                "no",
                "Never enable strict mode in the typescript config of every package",
                created="2026-03-01T00:00:00.000Z",
            ),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert report.plan.counts()["contradiction"] == 1
    data = entries_by_id(store)
    assert data["yes"]["superseded_by"] == "no"
    assert data["yes"]["supersede_reason"] == "contradiction"


def test_complements_are_cross_linked(tmp_path: Path) -> None:
    store = write_store(tmp_path, [entry("x", BASE), entry("y", COMPLEMENT)])
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert report.plan.counts()["complement"] == 1
    data = entries_by_id(store)
    assert data["x"]["complements"] == ["y"] and data["y"]["complements"] == ["x"]
    assert data["x"]["status"] == data["y"]["status"] == "candidate"


def test_second_run_changes_nothing_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    from bench.lesson_corpus import generate

    lessons = generate(400, seed=5, odd_rate=0.02).lessons
    store = write_store(
        tmp_path,
        [
            entry(
                f"e{i:04d}",
                lesson,
                created=f"2026-01-{1 + i % 28:02d}T00:00:00.000Z",
                phases=(1 + i % 4,),
            )
            for i, lesson in enumerate(lessons)
        ],
    )
    knowledge = store.swarm.files.knowledge
    original = knowledge.read_bytes()
    dry = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm", dry_run=True)
    assert dry.plan.changes and knowledge.read_bytes() == original
    assert not events_path(store.swarm.files).exists()

    first = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert first.plan.counts() == dry.plan.counts()
    assert first.plan.converged
    after = knowledge.read_bytes()
    log = events_path(store.swarm.files).read_bytes()
    second = consolidate_tier(open_store(tmp_path).swarm, ConsolidationConfig(), scope="swarm")
    assert not second.plan.changes
    assert knowledge.read_bytes() == after
    assert events_path(store.swarm.files).read_bytes() == log

    data = entries_by_id(store)
    assert len(data) == len(lessons)  # nothing deleted
    for item in data.values():
        if "superseded_by" in item:
            assert item["status"] == "archived"
            target, hops = item, 0
            while "superseded_by" in target and hops < 10:  # the pointer chain ends active
                target, hops = data[target["superseded_by"]], hops + 1
            assert target["status"] != "archived"
    records = EventLog(events_path(store.swarm.files)).records(first.run_id)
    kinds = [r["type"] for r in records]
    assert kinds[0] == "run_started" and kinds[-1] == "run_committed"
    changed = [r for r in records if r["type"] == "entry_changed"]
    assert len(changed) == first.changed
    for record in changed:  # the log alone restores any entry
        assert json.loads(record["before"])["id"] == record["id"]


@pytest.mark.parametrize("policy", list(EmptyLessons))
def test_empty_token_lessons(tmp_path: Path, policy: EmptyLessons) -> None:
    store = write_store(
        tmp_path,
        [
            entry("c1", "数据库迁移必须先备份数据库迁移"),
            entry("c2", "请在提交前运行全部测试请在提交前"),
            entry("c3", "数据库迁移必须先备份数据库迁移"),
            entry("w", "Supercalifragilistic"),
        ],
    )
    consolidate_tier(store.swarm, ConsolidationConfig(empty_lessons=policy), scope="swarm")
    archived = {k for k, v in entries_by_id(store).items() if v["status"] == "archived"}
    if policy is EmptyLessons.EXACT:
        assert archived == {"c3"}  # identical texts only
    else:
        assert len(archived) == 3  # every empty-bigram lesson is a duplicate of every other


def test_chains_converge_in_one_run(tmp_path: Path) -> None:
    """A~B and B~C are duplicates but A~C is not: rounds continue until nothing is left."""
    words = [
        "check",
        "the",
        "redis",
        "lock",
        "lease",
        "before",
        "every",
        "write",
        "to",
        "the",
        "knowledge",
        "store",
        "file",
    ]
    a = " ".join(words)
    b = " ".join([*words, "always"])
    c = " ".join([*words, "always", "first"])
    store = write_store(tmp_path, [entry("a", a), entry("b", b), entry("c", c)])
    first = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert first.plan.converged
    second = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert not second.plan.changes
    active = [k for k, v in entries_by_id(store).items() if v["status"] != "archived"]
    assert len(active) == 1


def test_thresholds_are_configurable_and_ordered() -> None:
    from pydantic import ValidationError

    config = ConsolidationConfig(
        duplicate_threshold=0.9, conflict_threshold=0.8, complement_threshold=0.6
    )
    assert config.duplicate_threshold == 0.9
    with pytest.raises(ValidationError, match="thresholds must satisfy"):
        ConsolidationConfig(duplicate_threshold=0.6, conflict_threshold=0.7)


def test_restore_keeps_entries_apart(tmp_path: Path) -> None:
    from swarmq.consolidation.knowledge import restore_superseded

    store = write_store(tmp_path, [entry("a", BASE, confidence=0.9), entry("b", NEAR)])
    consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert entries_by_id(store)["b"]["superseded_by"] == "a"
    revived = restore_superseded(store.swarm, "b")
    assert revived.status == "candidate" and "superseded_by" not in revived.data
    again = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert again.plan.counts()["duplicate"] == 0
    data = entries_by_id(store)
    assert data["b"]["status"] == "candidate" and data["a"]["consolidation_keep_apart"] == ["b"]
    kinds = [r["type"] for r in EventLog(events_path(store.swarm.files)).records()]
    assert "restored" in kinds


def test_identical_copies_merge_in_one_round(tmp_path: Path) -> None:
    copies = [
        entry(f"c{i:02d}", BASE if i % 2 else BASE.upper() + "!", phases=(i % 5 + 1,))
        for i in range(20)
    ]
    copies.append(entry("strong", BASE, status="established", phases=(1, 2, 3)))
    store = write_store(tmp_path, copies)
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert report.plan.counts()["exact_duplicate"] == 20
    assert report.plan.rounds == 2  # one round merges, the next finds nothing
    data = entries_by_id(store)
    assert data["strong"]["status"] == "established"
    assert len(data["strong"]["supersedes"]) == 20
    assert {p["phase_number"] for p in data["strong"]["confirmed_by"]} == {1, 2, 3, 4, 5}
    assert data["strong"]["retrieval_outcomes"]["applied_count"] == 21
