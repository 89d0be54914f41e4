"""Sweeps (TTL, stale todos, promotion, idempotency per phase), hive promotion, audit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmq.knowledge._sidecars import values
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.files import SWEEP_STATE_FILE
from swarmq.knowledge.hive import check_hive_promotions, promote_from_swarm, promote_lesson
from swarmq.knowledge.maintenance import audit, sweep
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.storage.locking import LocalLocks
from tests.knowledge.conftest import Clock

LESSON = "Run the python test suite before pushing to the main branch"


def test_candidate_to_established_to_promoted(knowledge: KnowledgeStore) -> None:
    entry = knowledge.add_lesson(LESSON, phase=1).entry
    assert entry is not None
    knowledge.swarm.reinforce(entry.id, 2)
    knowledge.swarm.reinforce(entry.id, 3)
    first = sweep(knowledge, 3)
    assert first.established == 1 and first.promoted == 0
    assert knowledge.swarm.get(entry.id).status == "established"  # type: ignore[union-attr]
    sweep(knowledge, 4)
    promoted = knowledge.swarm.get(entry.id)
    assert promoted is not None and promoted.status == "promoted"
    assert promoted.get("hive_eligible") is True


def test_established_promotes_by_age(knowledge: KnowledgeStore, clock: Clock) -> None:
    entry = knowledge.add_lesson(LESSON, phase=1).entry
    assert entry is not None
    knowledge.swarm.update(entry.id, {"status": "established"})
    clock.advance(days=91)
    sweep(knowledge, 1)
    assert knowledge.swarm.get(entry.id).status == "promoted"  # type: ignore[union-attr]


def test_ttl_archives_and_sweep_is_idempotent_per_phase(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = make_knowledge(default_max_phases=2, hive_enabled=False)
    entry = knowledge.add_lesson(LESSON).entry
    keeper = knowledge.swarm.add(
        NewLesson("Prefer uv over pip for python installs", max_phases=9)
    ).entry
    assert entry is not None and keeper is not None
    sweep(knowledge, 1)
    assert sweep(knowledge, 1).skipped  # same phase: nothing happens twice
    assert knowledge.swarm.get(entry.id).phases_alive == 1  # type: ignore[union-attr]
    sweep(knowledge, 2)
    result = sweep(knowledge, 3)
    assert result.archived == 1
    archived = knowledge.swarm.get(entry.id)
    assert archived is not None and archived.status == "archived" and archived.phases_alive == 3
    assert knowledge.swarm.get(keeper.id).status == "candidate"  # type: ignore[union-attr]
    sweep(knowledge, 4)
    assert knowledge.swarm.get(entry.id).phases_alive == 3  # type: ignore[union-attr]
    assert knowledge.swarm.restore(entry.id).status == "candidate"
    assert knowledge.swarm.get(entry.id).phases_alive == 0  # type: ignore[union-attr]


def test_sweep_recovers_from_a_crash_between_write_and_marker(knowledge: KnowledgeStore) -> None:
    knowledge.add_lesson(LESSON)
    sweep(knowledge, 7)
    state_path = knowledge.swarm.files.root / SWEEP_STATE_FILE
    state = json.loads(state_path.read_text())
    # simulate: the store was written but the final marker was not
    import hashlib

    digest = hashlib.sha256(knowledge.swarm.files.knowledge.read_bytes()).hexdigest()
    state_path.write_text(json.dumps({"pending": "7", "fingerprint": digest}))
    assert sweep(knowledge, 7).skipped
    assert knowledge.swarm.read().entries[0].phases_alive == 1
    assert json.loads(state_path.read_text())["last_phase"] == "7" and state["last_phase"] == "7"


def test_stale_todos_are_removed_but_recorded(knowledge: KnowledgeStore) -> None:
    todo = knowledge.add_lesson("TODO: remember to rotate the api token before release").entry
    assert todo is not None and todo.category == "todo"
    for phase in range(1, 5):
        sweep(knowledge, phase)
    assert knowledge.swarm.get(todo.id) is None
    evicted = values(knowledge.swarm.files.evicted)
    assert (
        evicted[0]["reason"] == "todo_expired" and json.loads(evicted[0]["line"])["id"] == todo.id
    )


def test_hive_promotion_routes_and_encounters(knowledge: KnowledgeStore, clock: Clock) -> None:
    fast = knowledge.swarm.add(
        NewLesson("Pin docker base images by digest in production", tags=["hive-fast-track"])
    ).entry
    plain = knowledge.add_lesson("Prefer uv over pip for python installs in CI").entry
    assert fast is not None and plain is not None
    summary = check_hive_promotions(knowledge)
    assert summary.new_promotions == 1 and summary.encounters_incremented == 1
    hive = knowledge.hive.read().entries
    assert len(hive) == 1 and hive[0].lesson == fast.lesson
    assert hive[0].status == "candidate" and hive[0].confidence == 0.5
    assert hive[0].source_project == "proj"
    assert hive[0].encounter_score == pytest.approx(1.1)  # same project: weight 1.0 × 0.1
    assert hive[0].confirmed_by == [
        {"project_name": "proj", "confirmed_at": "2026-05-01T12:00:00.000Z"}
    ]
    again = check_hive_promotions(knowledge)
    assert again.new_promotions == 0 and again.encounters_incremented == 0
    clock.advance(days=90)
    assert check_hive_promotions(knowledge).new_promotions == 1  # age route


def test_hive_candidate_confirmed_by_three_projects_is_established(
    knowledge: KnowledgeStore,
) -> None:
    entry = knowledge.hive.add(NewLesson("Pin docker base images by digest in production")).entry
    assert entry is not None
    knowledge.hive.update(
        entry.id,
        {
            "source_project": "other",
            "confirmed_by": [
                {"project_name": "a", "confirmed_at": "x"},
                {"project_name": "b", "confirmed_at": "y"},
            ],
        },
    )
    knowledge.add_lesson("Pin docker base images by digest in production!")
    summary = check_hive_promotions(knowledge)
    assert summary.advancements == 1
    hive = knowledge.hive.get(entry.id)
    assert hive is not None and hive.status == "established"
    assert hive.encounter_score == pytest.approx(1.05)  # cross-project weight 0.5


def test_manual_promotion(knowledge: KnowledgeStore) -> None:
    entry = knowledge.add_lesson(LESSON).entry
    assert entry is not None
    hive = promote_from_swarm(knowledge, entry.id)
    assert (hive.status, hive.confidence, hive.encounter_score) == ("promoted", 1.0, 1.0)
    with pytest.raises(Exception, match="near-duplicate"):
        promote_lesson(knowledge, LESSON)
    with pytest.raises(Exception, match="dangerous"):
        promote_lesson(knowledge, "Use rm -rf to clean the build output folder")
    assert (
        promote_lesson(knowledge, "Use `rm` to clean the stale build output folder").status
        == "promoted"
    )


def test_audit_flags(knowledge: KnowledgeStore) -> None:
    a = knowledge.add_lesson(LESSON).entry
    b = knowledge.add_lesson("Prefer uv over pip for python installs in CI", phase=1).entry
    assert a is not None and b is not None
    knowledge.swarm.update(
        b.id,
        {
            "confidence": 0.95,
            "retrieval_outcomes": {
                "applied_count": 0,
                "succeeded_after_count": 0,
                "failed_after_count": 0,
                "shown_count": 5,
                "applied_explicit_count": 5,
            },
        },
    )
    report = audit(knowledge)["tiers"][0]
    assert report["entries"] == 2
    assert {"id": a.id, "problems": ["Unconfirmed auto-generated"]} in report["unhealthy"]
    assert report["evergreen"] == [b.id]


def test_the_hive_is_swept_once_per_project_phase(
    make_knowledge: Callable[..., KnowledgeStore],
    tmp_path: Path,
    locks: LocalLocks,
    clock: Clock,
) -> None:
    knowledge = make_knowledge(default_max_phases=2)
    candidate = knowledge.hive.add(
        NewLesson("Pin docker base images by digest in production")
    ).entry
    assert candidate is not None
    other = KnowledgeStore(
        tmp_path / "other" / ".swarm",
        locks=locks,
        config=KnowledgeConfig(default_max_phases=2),
        data_dir=tmp_path / "data",
        project_name="other",
        clock=clock,
    )
    first = sweep(knowledge, 1)
    assert first.hive_sweep["aged"] == 1
    assert sweep(other, 1).hive_sweep["aged"] == 1  # another project's phase ages it too
    assert sweep(knowledge, 1).skipped  # but one project's phase only once
    assert knowledge.hive.get(candidate.id).phases_alive == 2  # type: ignore[union-attr]
    assert sweep(knowledge, 2).hive_sweep["archived"] == 1
    assert knowledge.hive.get(candidate.id).status == "archived"  # type: ignore[union-attr]
