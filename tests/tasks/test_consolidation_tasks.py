"""Nightly consolidation through a real Celery worker on real Redis: per-scope tasks with
deterministic ids, done markers, progress state, idempotent re-runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from bench.lesson_corpus import generate
from swarmq.coord import keys
from swarmq.tasks.consolidation import task_id_for, window_of
from tests.consolidation.support import entry, learning_md, write_store
from tests.support import WorkerProcess, write_roster


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        knowledge={"swarm_max_entries": None, "hive_max_entries": None},
    )


LESSONS = 500
"""Enough for the swarm scope's run to report progress more than once and to last a few seconds
(most of it embedding each lesson once), so the poll below sees it running; 1,500 cost the suite
~20 s of CPU for nothing more."""


def _fixture(project: Path) -> None:
    lessons = generate(LESSONS, seed=21).lessons
    write_store(
        project,
        [
            entry(f"e{i:05d}", lesson, created=f"2026-01-{1 + i % 28:02d}T00:00:00.000Z")
            for i, lesson in enumerate(lessons)
        ],
    )
    learnings = project / ".agents" / "learnings"
    learnings.mkdir(parents=True)
    body = "Retry the flaky playwright login test once with a fresh browser context first"
    (learnings / "2026-01-01-a.md").write_text(learning_md("a", body))
    (learnings / "2026-01-02-b.md").write_text(learning_md("b", body + ".", date="2026-01-02"))


def test_nightly_scopes_through_a_worker(
    start_worker: Callable[..., WorkerProcess],
    celery_client: Celery,
    tmp_path: Path,
    redis_client: redis.Redis,
    swarm_name: str,
) -> None:
    project = tmp_path / "project"
    _fixture(project)
    knowledge = project / ".swarm" / "knowledge.jsonl"
    start_worker("w1", concurrency=2)
    window = window_of()

    sent = celery_client.send_task(
        "consolidation.nightly", kwargs={"window": window}, queue="consolidation"
    ).get(timeout=60)
    assert sent == {
        "window": window,
        "enqueued": ["swarm", "hive", "learnings"],
        "already_done": [],
    }
    swarm_result = celery_client.AsyncResult(task_id_for(swarm_name, "swarm", window))
    states: set[str] = set()
    # A full consolidation of LESSONS lessons: seconds, even on a loaded 2-core machine.
    deadline = time.monotonic() + 300
    while not swarm_result.ready() and time.monotonic() < deadline:
        states.add(swarm_result.state)
        time.sleep(0.02)
    summary: dict[str, Any] = swarm_result.get(timeout=30)
    assert "PROGRESS" in states
    assert summary["outcome"] == "done" and summary["changed"] > 0 and summary["converged"]
    learnings = celery_client.AsyncResult(task_id_for(swarm_name, "learnings", window)).get(
        timeout=60
    )
    assert learnings["counts"]["duplicate"] + learnings["counts"]["exact_duplicate"] == 1
    hive = celery_client.AsyncResult(task_id_for(swarm_name, "hive", window)).get(timeout=60)
    assert hive["entries"] == 0 and hive["run_id"] is None

    for scope in ("swarm", "hive", "learnings"):
        assert redis_client.exists(keys.done_marker(swarm_name, f"consolidation.{scope}", window))

    after = knowledge.read_bytes()
    again = celery_client.send_task(
        "consolidation.nightly", kwargs={"window": window}, queue="consolidation"
    ).get(timeout=60)
    assert again["enqueued"] == [] and again["already_done"] == ["swarm", "hive", "learnings"]
    repeat = celery_client.send_task(
        "consolidation.scope", kwargs={"scope": "swarm", "window": window}, queue="consolidation"
    ).get(timeout=60)
    assert repeat["outcome"] == "already_done"
    # A new window runs again and, the store being consolidated, changes nothing.
    fresh = celery_client.send_task(
        "consolidation.scope",
        kwargs={"scope": "swarm", "window": "2099-01-01"},
        queue="consolidation",
    ).get(timeout=120)
    assert fresh["outcome"] == "done" and fresh["changed"] == 0
    assert knowledge.read_bytes() == after
    redis_client.delete(keys.done_marker(swarm_name, "consolidation.swarm", "2099-01-01"))
