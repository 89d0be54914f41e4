"""A host dies mid-mission: the reaper resumes it on a live worker; a standby beat takes over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from swarmq.client import LIVENESS_TTL_SECONDS, MissionClient
from swarmq.coord import keys
from swarmq.coord.cluster import Cluster
from swarmq.missions.states import MissionState
from swarmq.profiles.layout import ProfileLayout
from swarmq.reaper import reap
from swarmq.roster.loader import load_roster
from tests.support import REPO, WorkerProcess, worker_env, write_roster

AGENT = {
    "command": [
        sys.executable,
        str(REPO / "tests" / "agent_script.py"),
        "{prompt_file}",
        "--pause-first",
        "3",
    ],
    "timeout_seconds": 60,
}


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    workers = [
        {"id": f"r{n}", "role": "runner", "queues": ["missions"], "agent": AGENT} for n in (1, 2)
    ]
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=workers,
        missions={
            "heartbeat_seconds": 0.3,
            "stale_after_seconds": 2,
            "kill_grace_seconds": 1,
            "reap_after_seconds": 2,
        },
    )


@pytest.fixture
def client(roster_file: Path, celery_client: Any) -> MissionClient:
    roster = load_roster(roster_file, env={})
    return MissionClient(
        roster, celery=celery_client, locks=Cluster.connect(roster.cluster_config()).locks
    )


def kill_tree(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL a worker and everything under it, as a host losing power would."""
    assert proc is not None
    tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    for item in tree:
        item.kill()
    proc.wait(timeout=10)


def test_dead_host_mission_is_resumed_elsewhere(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    r1 = start_worker("r1")
    mission = client.submit("Survive a dead host", role="runner")
    first = mission.current
    assert first is not None and first.worker_id == "r1"
    started = ProfileLayout(client.roster.profiles_dir, client.roster.shared_dir, "r1").mission_dir(
        mission.id
    )
    deadline = time.monotonic() + 30
    while not (started / "agent-started-1").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (started / "agent-started-1").exists(), r1.log()
    killed_at = time.monotonic()
    kill_tree(r1.proc)
    start_worker("r2")
    assert reap(client, older_than=60) == []  # a fresh-enough heartbeat is left alone
    found: list[Any] = []
    while not found and time.monotonic() < killed_at + 30:
        time.sleep(0.5)
        found = [r for r in reap(client) if r.action == "resumed"]
    assert found and found[0].assignment_id == first.id and "r1@" in found[0].node
    done = client.get(mission.id)
    while done.state is not MissionState.COMPLETE and time.monotonic() < killed_at + 60:
        time.sleep(0.3)
        done = client.get(mission.id)
    assert done.state is MissionState.COMPLETE, client.show(mission.id)
    old, new = done.assignments
    assert old.state is MissionState.FAILED and "reaped: r1@" in (old.reason or "")
    assert new.worker_id == "r2" and new.state is MissionState.COMPLETE and new.resume
    assert reap(client) == []  # nothing left to do


def test_resume_force_abandons_a_live_looking_assignment(
    client: MissionClient, start_worker: Callable[..., WorkerProcess]
) -> None:
    mission = client.submit("Nobody runs this yet", role="runner")  # no worker: blocked
    assert mission.state is MissionState.BLOCKED
    start_worker("r2")
    time.sleep(LIVENESS_TTL_SECONDS)  # the client caches "nobody answers" that long
    queued = client.resume(mission.id)
    assert queued.state is MissionState.PLANNING
    with pytest.raises(Exception, match="--force"):
        client.resume(mission.id)
    forced = client.resume(mission.id, force="operator: host gone")
    assert forced.assignments[-2].state is MissionState.FAILED
    assert forced.assignments[-2].reason == "operator: host gone"
    assert forced.current is not None and forced.current.state is MissionState.PLANNING


def test_standby_beat_takes_over_within_a_lease(
    roster_file: Path, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    env = {**worker_env(roster_file, "r1", {}), "SWARMQ_BEAT_LEASE_SECONDS": "3"}

    def beat(name: str) -> subprocess.Popen[bytes]:
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "swarmq.workers.app",
            "beat",
            "-s",
            str(tmp_path / f"sched-{name}"),
            "-l",
            "INFO",
        ]
        log = (tmp_path / f"beat-{name}.log").open("ab")
        return subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    key = keys.beat_lock(swarm_name)
    first = beat("a")
    second: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 30
        while redis_client.get(key) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        holder = redis_client.get(key)
        assert holder is not None and f":{first.pid}:" in holder.decode()
        second = beat("b")
        log = tmp_path / "beat-b.log"
        deadline = time.monotonic() + 60
        while "standby" not in log.read_text() and time.monotonic() < deadline:
            assert second.poll() is None, log.read_text()  # a standby, not an error exit
            time.sleep(0.2)
        assert f":{first.pid}:" in (redis_client.get(key) or b"").decode()
        os.killpg(first.pid, signal.SIGKILL)
        killed = time.monotonic()
        while time.monotonic() < killed + 10:
            now = (redis_client.get(key) or b"").decode()
            if f":{second.pid}:" in now:
                break
            time.sleep(0.1)
        took = time.monotonic() - killed
        assert f":{second.pid}:" in (redis_client.get(key) or b"").decode(), (
            tmp_path / "beat-b.log"
        ).read_text()
        assert took <= 3 + 1.5, took  # one lease plus one standby poll
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)
    assert redis_client.get(key) is None  # released on a clean stop
