"""missions.run with real Celery workers and a real agent process (tests/agent_script.py)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.missions.routing import UnknownTarget
from swarmq.missions.states import MissionState
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.loader import load_roster
from tests.support import REPO, WorkerProcess, wait_for_file, write_roster

AGENT = [sys.executable, str(REPO / "tests" / "agent_script.py"), "{prompt_file}"]


def agent(*flags: str, timeout: float = 30) -> dict[str, Any]:
    return {"command": [*AGENT, *flags], "timeout_seconds": timeout}


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    workers = [
        {
            "id": "w1",
            "role": "builder",
            "specialty": "backend",
            "queues": ["missions"],
            "agent": agent("--pause-first", "6"),
        },
        {"id": "w2", "role": "builder", "queues": ["missions"], "agent": agent("--exit", "3")},
        {
            "id": "w3",
            "role": "builder",
            "queues": ["missions"],
            "agent": agent("--hang", timeout=2),
        },
        {"id": "w4", "role": "curator", "queues": ["curator"]},
        {"id": "w5", "role": "reviewer", "queues": ["missions"], "agent": agent("--block")},
    ]
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=workers,
        missions={"heartbeat_seconds": 0.5, "stale_after_seconds": 3, "kill_grace_seconds": 1},
    )


@pytest.fixture
def client(roster_file: Path, celery_client: Any) -> MissionClient:
    roster = load_roster(roster_file, env={})
    cluster = Cluster.connect(roster.cluster_config())
    return MissionClient(roster, celery=celery_client, locks=cluster.locks)


def wait_state(
    client: MissionClient, mission_id: str, states: set[str], timeout: float = 40
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mission = client.get(mission_id)
        if mission.state.value in states:
            return mission
        time.sleep(0.2)
    raise AssertionError(
        f"mission stayed {client.get(mission_id).state.value}: {client.show(mission_id)}"
    )


def no_duplicate_events(events: list[dict[str, Any]]) -> None:
    ids = [e["eventId"] for e in events]
    assert len(ids) == len(set(ids)), ids
    keys = [(e["type"], e["summary"], e.get("assignmentId")) for e in events]
    assert len(keys) == len(set(keys)), keys


def test_kill_mid_mission_redelivers_without_duplicates(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    worker = start_worker("w1", env={"PYTHONUNBUFFERED": "1"})
    mission = client.submit("Implement the parser", worker="w1", client_key="k-kill")
    layout = ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, "w1")
    started = layout.mission_dir(mission.id) / "agent-started-1"
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists(), worker.log()
    time.sleep(0.5)  # the first checkpoints are recorded
    # Kill the pool process running the task (OOM-killer style); its agent dies with it.
    assert worker.proc is not None
    children = psutil.Process(worker.proc.pid).children()
    runner = next(
        c
        for c in children
        if any(p.pid == int(started.read_text()) for p in c.children(recursive=True))
    )
    os.kill(runner.pid, signal.SIGKILL)
    done = wait_state(client, mission.id, {"complete"}, timeout=60)
    assert done.current is not None and done.current.attempts == 2
    events = read_events(layout, mission.id)
    no_duplicate_events(events)
    types = [e["type"] for e in events]
    assert types.count("mission-start") == 1 and types.count("dispatch") == 1
    assert types.count("resume") == 1 and types.count("complete") == 1
    assert [e["summary"] for e in events if e["type"] == "checkpoint"].count(
        "read the mission objective"
    ) == 1
    # idempotent submit: same key, same mission, not rerun
    again = client.submit("Implement the parser", worker="w1", client_key="k-kill")
    assert again.id == mission.id
    time.sleep(0.5)
    no_duplicate_events(read_events(layout, mission.id))
    archive = client.roster.shared_dir / "swarm" / "missions" / mission.id
    # Written after the ledger says complete: waited for, not assumed after the sleep above.
    assert json.loads(wait_for_file(archive / "mission.json").read_text())["state"] == "complete"


def test_bad_agents_and_workers_get_clear_states(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    start_worker("w2")
    start_worker("w3")
    start_worker("w5")
    failing = client.submit("exit non-zero", worker="w2")
    hanging = client.submit("hang forever", worker="w3")
    blocked = client.submit("needs creds", role="reviewer")
    with pytest.raises(UnknownTarget, match="unknown worker 'ghost'"):
        client.submit("nobody", worker="ghost")  # a typo: refused, nothing written
    no_agent = client.submit("curate", worker="w4")
    dead = client.submit("sleeping worker", worker="w1")
    assert "nobody" not in {m.objective for m in client.list()}
    assert no_agent.state is MissionState.FAILED and "no agent command" in (no_agent.reason or "")
    assert dead.state is MissionState.BLOCKED and "not running" in (dead.reason or "")
    f = wait_state(client, failing.id, {"failed"})
    assert "exited with status 3" in (f.reason or "")
    # Missions store no result (the ledger is the result, and Redis stays bounded): the task's
    # FAILURE state reaches monitoring through task events, which tests/workers/test_reload.py
    # checks in Flower's API. Nothing was left in the result backend.
    assert client.celery.AsyncResult(f.assignments[-1].id).state == "PENDING"
    h = wait_state(client, hanging.id, {"failed"})
    assert "timed out after 2s" in (h.reason or "")
    b = wait_state(client, blocked.id, {"blocked"})
    assert "staging credentials" in (b.reason or "")
    for mission, worker in ((failing, "w2"), (hanging, "w3"), (blocked, "w5")):
        layout = ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, worker)
        events = read_events(layout, mission.id)
        assert any(e["type"] == "blocked" for e in events)
        assert layout.handoff(mission.id).exists() and layout.shared_latest.exists()
    dead_events = read_events(
        ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, "w1"), dead.id
    )
    assert dead_events and dead_events[0]["type"] == "blocked"
    ledger = client.list()
    assert {m.id for m in ledger} >= {
        failing.id,
        hanging.id,
        blocked.id,
        no_agent.id,
        dead.id,
    }


def test_running_worker_is_live_by_its_presence_key_until_it_stops(
    client: MissionClient, start_worker: Callable[..., WorkerProcess], redis_client: redis.Redis
) -> None:
    from swarmq.coord.presence import present

    swarm = client.roster.swarm
    assert present(redis_client, swarm, ["w1", "w2"]) == set()
    worker = start_worker("w1")
    deadline = time.monotonic() + 10
    while "w1" not in present(redis_client, swarm, ["w1", "w2"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert present(redis_client, swarm, ["w1", "w2"]) == {"w1"}, worker.log()
    assert client.live_workers(["w1"]) == {"w1"}
    worker.stop()  # warm shutdown withdraws the key at once (a kill leaves it for its lease)
    assert present(redis_client, swarm, ["w1"]) == set()
