"""A new mission's task is sent before the submit's ledger commit (issue 15 item 2): what the
worker does when the record is not there yet, or never will be, or lost a race. Real Redis,
real Celery workers, real agents; the "client that died after sending" is the client's own
send without its commit."""

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
from swarmq.missions.dispatch import MissionSpec, create_mission
from swarmq.missions.ledger import LedgerDoc, Mission
from swarmq.missions.routing import Target, route
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.loader import load_roster
from tests.support import REPO, WorkerProcess, write_roster

AGENT = {
    "command": [sys.executable, str(REPO / "tests" / "agent_script.py"), "{prompt_file}"],
    "timeout_seconds": 30,
}


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    workers = [{"id": "w1", "role": "builder", "queues": ["missions"], "agent": AGENT}]
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=workers,
        missions={"heartbeat_seconds": 0.5, "kill_grace_seconds": 1},
    )


@pytest.fixture
def client(roster_file: Path, celery_client: Any) -> MissionClient:
    roster = load_roster(roster_file, env={})
    return MissionClient(
        roster, celery=celery_client, locks=Cluster.connect(roster.cluster_config()).locks
    )


def record(client: MissionClient, objective: str, key: str | None = None) -> Mission:
    """The record ``submit`` would send, made on a scratch document and never committed."""
    decision = route(client.roster.workers, Target("w1"), live={"w1"}, load={})
    return create_mission(
        LedgerDoc(), MissionSpec(objective, client_key=key, target=Target("w1")), decision
    )


def drained(client: MissionClient) -> None:
    """Wait until w1 has ended every task before this one (prefork, concurrency 1)."""
    client.celery.send_task("ops.ping", queue="worker.w1", routing_key="worker.w1").get(timeout=60)


def wait_state(client: MissionClient, mission_id: str, state: str, timeout: float = 40) -> Mission:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            mission = client.get(mission_id)
        except LookupError:
            mission = None
        if mission is not None and mission.state.value == state:
            return mission
        time.sleep(0.1)
    raise AssertionError(f"mission {mission_id} never became {state}")


def test_a_task_whose_submit_never_committed_creates_its_mission_once(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    worker = start_worker("w1")
    mission = record(client, "Survive the client's crash", key="k-crash")
    assert mission.current is not None
    client._send(mission, mission.current)  # ...and the client dies before its commit
    done = wait_state(client, mission.id, "complete")
    assert done.client_key == "k-crash" and done.current is not None and done.current.attempts == 1
    assert [entry.type for entry in done.log][:2] == ["submit", "dispatch"]  # the client's record
    # The orchestrator's retry finds it by its key: no second mission, nothing run again.
    again = client.submit("Survive the client's crash", worker="w1", client_key="k-crash")
    assert again.id == mission.id
    drained(client)
    assert [m.id for m in client.list()] == [mission.id]
    layout = ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, "w1")
    types = [e["type"] for e in read_events(layout, mission.id)]
    assert types.count("mission-start") == 1 and types.count("complete") == 1
    assert "refused" not in worker.log()


def test_a_task_whose_client_key_another_mission_owns_is_stopped_and_never_created(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    worker = start_worker("w1")
    first = client.submit("One mission per key", worker="w1", client_key="k-race")
    wait_state(client, first.id, "complete")
    loser = record(client, "One mission per key", key="k-race")  # a concurrent submit's task
    assert loser.current is not None
    client._send(loser, loser.current)
    drained(client)
    assert "speculative start refused" in worker.log() and "belongs to mission" in worker.log()
    assert [m.id for m in client.list()] == [first.id]
    assert client.read_ledger().read().key_owner("k-race") == first.id
    layout = ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, "w1")
    assert read_events(layout, loser.id) == []  # its agent was stopped before anything was recorded


def test_a_mission_cancelled_before_its_claim_is_not_run(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    mission = record(client, "Cancelled in flight")
    assert mission.current is not None
    with client.ledger.edit() as doc:  # the submit committed; the task is still on its way
        doc.missions[mission.id] = mission.model_copy(deep=True)
    client.cancel(mission.id, "changed my mind")
    worker = start_worker("w1")
    client._send(mission, mission.current)  # the message still says planning
    drained(client)
    assert "speculative start refused" in worker.log()  # started, stopped, then claimed
    stored = client.get(mission.id)
    assert stored.state.value == "cancelled"
    assert stored.current is not None and stored.current.state.value == "cancelled"
    assert stored.current.attempts == 0 and stored.current.claim is None
    layout = ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, "w1")
    assert not [
        e for e in read_events(layout, mission.id) if e["type"] in ("mission-start", "complete")
    ]


def test_a_first_delivery_published_twice_starts_its_agent_once(
    client: MissionClient, start_worker: Callable[..., WorkerProcess], tmp_path: Path
) -> None:
    """A publish retried across a broker restart (the first copy had landed) delivers the same
    task id twice, both as first deliveries: the copy that comes after the run must not exec
    the agent again, not even speculatively."""
    starts = tmp_path / "agent-starts.log"
    start_worker("w1", env={"SWARMQ_AGENT_STARTS": str(starts)})
    mission = record(client, "Published twice by a retried send")
    assert mission.current is not None
    client._send(mission, mission.current)
    wait_state(client, mission.id, "complete")
    drained(client)
    client._send(mission, mission.current)  # the same message again, not marked redelivered
    drained(client)
    assert len(starts.read_text().splitlines()) == 1, starts.read_text()
    done = client.get(mission.id)
    assert done.state.value == "complete" and [a.attempts for a in done.assignments] == [1]
