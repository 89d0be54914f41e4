"""An acknowledged flywheel lesson reaches its AgentOps learning as feedback, through a real
worker on real Redis: the mission's agent applies the injected entry, the worker commits the
marker and cites the learning ``applied``, and the close loop moves its utility, σ and ρ."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.flywheel.bridge import publish
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.inject import inject
from swarmq.knowledge.query import QueryContext
from swarmq.names import FORGE_CLOSE_LOOP, JOB_FAMILIES, MATURITY_KNOWLEDGE_ACK
from swarmq.roster.loader import load_roster
from swarmq.wiring.knowledge import knowledge_store
from tests.support import WorkerProcess, write_roster

AGENT = """
import re, sys
prompt = open(sys.argv[1], encoding="utf-8").read()
trace = re.search(r"trace_id: (\\S+)", prompt)
for entry_id in re.findall(r"^- id: (\\S+)$", prompt, re.MULTILINE):
    print(f"KNOWLEDGE_APPLIED:{trace.group(1)}:{entry_id} reason=ran the tests with python3")
print("STATE: DONE")
"""

LESSON = (
    "Run the Django test suite with `python3 manage.py test`: the interpreter on this host is "
    "python3 and plain `python` is not installed."
)
LEARNING = f"""---
id: pend-2026-03-01-forge-abc-l1
type: learning
date: 2026-03-01
tier: silver
utility: 0.5000
confidence: 0.8000
maturity: provisional
reward_count: 0
helpful_count: 0
harmful_count: 0
source_session: s-1
---

# Learning: Run the Django test suite with python3

## What We Learned

{LESSON}
"""


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


def test_an_acknowledged_lesson_moves_its_learning(roster_file: Path, celery_client: Any) -> None:
    roster = load_roster(roster_file, env={})
    cluster = Cluster.connect(roster.cluster_config())
    layout = AgentsLayout(roster.agents_dir)
    learning = layout.learnings / "2026-03-01-pend-2026-03-01-forge-abc-l1.md"
    learning.parent.mkdir(parents=True)
    learning.write_text(LEARNING, encoding="utf-8")
    knowledge = knowledge_store(roster, cluster.locks)
    bridged = publish(
        knowledge,
        str(learning),
        {"type": "learning", "content": LESSON, "tier": "silver", "confidence": 0.8},
    )
    assert bridged.outcome == "added" and bridged.entry_id

    worker = WorkerProcess(roster_file, "w1").start(celery_client)
    try:
        before = celery_client.send_task(FORGE_CLOSE_LOOP).get(timeout=60)
        assert before["metrics"]["rho"] == 0.0 and before["metrics"]["sigma"] == 0.0
        client = MissionClient(roster, celery=celery_client, locks=cluster.locks)
        mission = client.submit(
            "Run the Django test suite with python3 and fix the failing test",
            worker="w1",
            client_key="ack-feedback-1",
        )
        wait_for(
            lambda: client.get(mission.id).state.value == "complete",
            what="the mission to complete",
        )
        entry = wait_for(
            lambda: (
                (e := knowledge.swarm.get(str(bridged.entry_id)))
                and e.counter("applied_explicit_count") >= 1
                and e
            ),
            what="the acknowledgement to land",
        )
        assert entry.counter("shown_count") >= 1

        def citations() -> list[dict[str, Any]]:
            return [
                json.loads(line)
                for line in layout.citations.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]

        # the entry's counter and the learning's citation are two files the acknowledgement
        # writes one after the other: wait for the second too
        cited = wait_for(
            lambda: (c := citations()) and len(c) >= 2 and c, what="the applied citation"
        )
        path = ".agents/learnings/2026-03-01-pend-2026-03-01-forge-abc-l1.md"
        # shown (exposure), then applied (use): one trace, the entry named as the query
        assert [(c["artifact_path"], c["citation_type"]) for c in cited] == [
            (path, "retrieved"),
            (path, "applied"),
        ]
        assert cited[0]["session_id"] == cited[1]["session_id"]
        assert cited[0]["session_id"].startswith("trace-")
        assert {c["query"] for c in cited} == {bridged.entry_id}
        assert cited[1]["cited_by_agent_id"] == "builder"

        after = celery_client.send_task(FORGE_CLOSE_LOOP).get(timeout=60)
        assert after["feedback"]["rewards"] == 1
        assert after["metrics"]["sigma"] == 1.0 and after["metrics"]["rho"] == 1.0
        text = learning.read_text(encoding="utf-8")
        assert "utility: 0.5500" in text and "reward_count: 1" in text
        assert "helpful_count: 1" in text

        # an architect's marker through the maturity.knowledge_ack job feeds back the same way
        shown = inject(knowledge, QueryContext(text="django test suite python3"), session_id="s-7")
        assert [r.entry.id for r in shown.shown] == [bridged.entry_id]
        acked = celery_client.send_task(
            MATURITY_KNOWLEDGE_ACK,
            args=[f"KNOWLEDGE_APPLIED:{shown.trace_id}:{bridged.entry_id} reason=again"],
        ).get(timeout=60)
        assert [r["status"] for r in acked["results"]] == ["committed"]
        last = json.loads(layout.citations.read_text(encoding="utf-8").splitlines()[-1])
        assert (last["citation_type"], last["session_id"]) == ("applied", "s-7")
        again = celery_client.send_task(FORGE_CLOSE_LOOP).get(timeout=60)
    finally:
        worker.stop()
    assert again["feedback"]["rewards"] == 1
    assert "utility: 0.5950" in learning.read_text(encoding="utf-8")
