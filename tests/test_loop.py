"""The swarm's loop across every job, through one real worker on real Redis.

A lesson in the knowledge store is injected into a mission's prompt; the agent acknowledges it
and says what it learned; the acknowledgement lands on the entry and in the receipt chain; the
transcript goes to forge, whose pending file the flywheel ingests into its pool.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.names import JOB_FAMILIES
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.loader import load_roster
from swarmq.wiring.knowledge import knowledge_store
from tests.support import WorkerProcess, write_roster

AGENT = """
import re, sys
prompt = open(sys.argv[1], encoding="utf-8").read()
trace = re.search(r"trace_id: (\\S+)", prompt)
ids = re.findall(r"^- id: (\\S+)$", prompt, re.MULTILINE)
print("CHECKPOINT: read the directives")
for entry_id in ids:
    print(f"KNOWLEDGE_APPLIED:{trace.group(1)}:{entry_id} reason=renewed the lease in a watchdog")
print("I learned that the Redis lock must be renewed by a watchdog thread, because a lease that "
      "expires mid-write lets a second worker overwrite the store.")
print("Decision: we will use fencing tokens for every canonical file write since stale holders "
      "must be refused.")
print("STATE: DONE")
"""

LESSON = "Renew Redis store locks from a watchdog thread while a long write holds them."


def wait_for(predicate: Callable[[], Any], timeout: float = 60, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    worker = {
        "id": "w1",
        "role": "builder",
        "queues": list(JOB_FAMILIES),
        "agent": {"command": [sys.executable, str(agent), "{prompt_file}"], "timeout_seconds": 60},
    }
    config = write_roster(tmp_path, swarm_name, redis_url, workers=[worker])
    (tmp_path / "project" / ".swarm").mkdir(parents=True)
    return config


def test_lesson_injected_acknowledged_and_transcript_forged(
    roster_file: Path, celery_client: Any
) -> None:
    roster = load_roster(roster_file, env={})
    cluster = Cluster.connect(roster.cluster_config())
    knowledge = knowledge_store(roster, cluster.locks)
    added = knowledge.add_lesson(
        LESSON,
        category="architecture",
        phase=1,
        directives={"applies_to_agents": ["builder"], "triggers": ["lock"]},
    )
    assert added.outcome == "added" and added.entry is not None
    entry_id = added.entry.id

    worker = WorkerProcess(roster_file, "w1").start(celery_client)
    try:
        client = MissionClient(roster, celery=celery_client, locks=cluster.locks)
        mission = client.submit(
            "Make the Redis store lock survive long writes", worker="w1", client_key="loop-1"
        )
        done = wait_for(
            lambda: client.get(mission.id).state.value == "complete" and client.get(mission.id),
            what="the mission to complete",
        )
        assignment = done.assignments[-1].id

        # The prompt carried the directive block with the lesson.
        layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "w1")
        prompt = next(layout.root.rglob(f"prompt-{assignment}.txt")).read_text()
        assert "<swarm_knowledge_directives>" in prompt and entry_id in prompt

        # Shown and acknowledged: counters moved, receipts chained.
        entry = wait_for(
            lambda: (
                (e := knowledge.swarm.get(entry_id))
                and e.counter("applied_explicit_count") >= 1
                and e
            ),
            what="the acknowledgement to land",
        )
        assert entry.counter("shown_count") >= 1
        receipts = (roster.swarm_dir / "knowledge-receipts-v2.jsonl").read_text().splitlines()
        assert any('"terminal' in line or "applied" in line for line in receipts)

        # The transcript went to forge: an AgentOps pending file with the learning.
        pending_dir = roster.agents_dir / "knowledge" / "pending"
        pending = wait_for(lambda: list(pending_dir.glob("*.md")), what="forge's pending file")
        text = "\n".join(p.read_text() for p in pending)
        assert "watchdog" in text

        # The flywheel ingests it into the pool.
        closed = celery_client.send_task("forge.close_loop").get(timeout=60)
        assert closed
        assert list((roster.agents_dir / "pool").rglob("*.json"))
    finally:
        worker.stop()
