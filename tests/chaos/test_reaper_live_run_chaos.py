"""The reaper never resumes a mission whose first run is alive: no agent is started twice.

The window, widened on purpose (issue 31): right after a Redis restart a worker's consumer is
still reconnecting, so its node does not answer the reaper's ping, while the run itself waits
in its settle for a store lock (Redis away, or a lock left held by an acquire whose reply the
kill lost, until its 30 s lease lapses). Nothing stamped the heartbeat after the agent exited,
so the run looked dead: the reaper resumed the mission on the other worker and its agent ran a
second time. Here the run's worker (its Celery main process) is SIGSTOPped, as a consumer that
does not answer, and the lock its settle takes first is held from the test, both for several
times ``reap_after_seconds``, while reaper passes run. The second test takes the reaper's
snapshot while the run is stale by a zero grace and resumes after it beat again: the resume is
fenced by the claim it judged (``recovery.still_stale``) and refused.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.missions.recovery import RunAlive, stale_runs, still_stale
from swarmq.missions.states import MissionState
from swarmq.profiles.layout import ProfileLayout
from swarmq.reaper import Reaped, reap
from swarmq.roster.loader import load_roster
from swarmq.storage.locking import file_resource
from tests.chaos.broker_support import starts, wait
from tests.support import REPO, WorkerProcess, write_roster

pytestmark = pytest.mark.slow

REAP_AFTER = 2.0
HOLD = 4 * REAP_AFTER


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    agent = {
        "command": [
            sys.executable,
            str(REPO / "tests" / "agent_script.py"),
            "{prompt_file}",
            "--pause-first",
            "2",
        ],
        "timeout_seconds": 60,
        "env": {"SWARMQ_AGENT_STARTS": str(tmp_path / "agent-starts.log")},
    }
    workers = [
        {"id": f"r{n}", "role": "runner", "queues": ["missions"], "agent": agent} for n in (1, 2)
    ]
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=workers,
        missions={
            "heartbeat_seconds": 0.3,
            "stale_after_seconds": REAP_AFTER,
            "reap_after_seconds": REAP_AFTER,
            "kill_grace_seconds": 1,
            "ping_timeout_seconds": 1.0,
        },
    )


@pytest.fixture
def client(roster_file: Path, celery_client: Any) -> MissionClient:
    roster = load_roster(roster_file, env={})
    return MissionClient(
        roster, celery=celery_client, locks=Cluster.connect(roster.cluster_config()).locks
    )


@pytest.fixture
def two_workers(
    start_worker: Callable[..., WorkerProcess],
) -> Iterator[dict[str, WorkerProcess]]:
    workers = {w: start_worker(w) for w in ("r1", "r2")}
    yield workers
    for worker in workers.values():  # never leave one stopped for the fixture's teardown
        if worker.proc is not None and worker.proc.poll() is None:
            os.kill(worker.proc.pid, signal.SIGCONT)


def _running(client: MissionClient, roster_file: Path, title: str) -> tuple[str, str]:
    """Submit by role and wait until its agent runs: (mission id, worker id)."""
    mission = client.submit(title, role="runner")
    current = mission.current
    assert current is not None and current.worker_id is not None
    log = roster_file.parent / "agent-starts.log"
    wait(lambda: starts(log)[mission.id] >= 1, 30, "the agent started")
    return mission.id, current.worker_id


def _complete_once(client: MissionClient, roster_file: Path, mission_id: str) -> None:
    wait(
        lambda: client.get(mission_id).state is MissionState.COMPLETE or client.show(mission_id),
        60,
        "the mission complete",
    )
    counted = starts(roster_file.parent / "agent-starts.log")
    assert counted[mission_id] == 1, f"agent started {counted[mission_id]} times"
    (only,) = client.get(mission_id).assignments  # nothing reaped, nothing resumed
    assert only.state is MissionState.COMPLETE and only.attempts == 1


def test_a_settle_waiting_on_a_lock_while_its_node_is_silent_is_not_reaped(
    client: MissionClient, roster_file: Path, two_workers: dict[str, WorkerProcess]
) -> None:
    mission_id, worker_id = _running(client, roster_file, "Settle behind a held lock")
    roster = client.roster
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, worker_id)
    main = two_workers[worker_id].proc
    assert main is not None
    seen: list[Reaped] = []
    # The first lock the settle takes after the agent's markers: the mission's handoff.
    with client.locks.hold(file_resource(layout.handoff(mission_id))):
        os.kill(main.pid, signal.SIGSTOP)  # its node stops answering ping and inspect
        try:
            until = time.monotonic() + HOLD  # the agent exits 2 s in; the settle then waits
            while time.monotonic() < until:
                seen += reap(client)
                time.sleep(0.3)
        finally:
            os.kill(main.pid, signal.SIGCONT)
    resumed = [r.describe() for r in seen if r.action == "resumed"]
    assert not resumed, f"a live run was reaped: {resumed}"
    _complete_once(client, roster_file, mission_id)


def test_a_resume_decided_on_a_stale_snapshot_is_refused_once_the_run_beat_again(
    client: MissionClient, roster_file: Path, two_workers: dict[str, WorkerProcess]
) -> None:
    mission_id, _ = _running(client, roster_file, "Beat again before the resume")
    roster = client.roster
    (run,) = [  # the reaper's snapshot, with a grace every heartbeat exceeds
        r for r in stale_runs(client.read_ledger().read(), roster.runtime_dir, 0.0)
        if r.mission.id == mission_id
    ]  # fmt: skip
    fence = partial(still_stale, runtime_dir=roster.runtime_dir, run=run, older_than=REAP_AFTER)
    with pytest.raises(RunAlive, match=r"heartbeat is .* old again"):
        client.resume(mission_id, force="reaped (test)", reroute=True, only_if=fence)
    _complete_once(client, roster_file, mission_id)
