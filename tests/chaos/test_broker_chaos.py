"""Redis SIGKILLed and restarted under load, three times: the workers `swarmq up` started (kept,
with the beat and its reaper) reconnect and answer a ping within 30 s each time (from a new
process, then from this one, which lived through the restarts, as swarmq's long-lived processes
ask), every mission in flight completes once, and no agent is started twice.

A Redis of the test's own (AOF, fsync always, as a production broker runs) on a port of its own
(``SWARMQ_CHAOS_REDIS_PORT``, else a free one), so killing it touches nothing else.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kombu.connection import Connection

from swarmq.client import MissionClient
from swarmq.coord import keys
from swarmq.coord.cluster import Cluster
from swarmq.missions.states import MissionState
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.workers.app import create_app
from swarmq.workers.launcher import Supervisor
from swarmq.workers.processes import celery_hostname
from tests.chaos.broker_support import (
    PING_ERRORS,
    RECONNECT_BAR_SECONDS,
    answering,
    in_process,
    reconnect,
    starts,
    wait,
)
from tests.coord.redis_server import RedisServer
from tests.support import REPO, write_roster

pytestmark = pytest.mark.slow

WORKERS = 3
RUNS = 3


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    port = int(os.environ.get("SWARMQ_CHAOS_REDIS_PORT") or 0) or None
    directory = tmp_path / "redis"
    directory.mkdir()
    running = RedisServer(directory, port=port, durable=True).start()
    try:
        yield running
    finally:
        running.stop()


def _redeliver_unacked(roster: Roster) -> int:
    """Hand every message whose ack the restarts lost back to its queue, as the transport does
    once ``visibility_timeout`` passed, and wait until the workers consumed and acked them all:
    each is a mission already settled, so it must be skipped. Returns how many there were."""
    with Connection(
        roster.effective_broker_url,
        transport_options={"visibility_timeout": 0, "global_keyprefix": keys.prefix(roster.swarm)},
    ) as conn:
        channel: Any = conn.default_channel
        lost = int(channel.client.hlen(channel.unacked_key))
        time.sleep(0.01)  # every index score is now older than "now - 0"
        channel.qos.restore_visible(num=1000, interval=1)
        queues = [w.direct_queue for w in roster.workers] + ["missions"]

        def drained() -> object:
            backlog = [channel.client.llen(q) for q in queues]
            unacked = int(channel.client.hlen(channel.unacked_key))
            return True if unacked == 0 and not any(backlog) else (unacked, backlog)

        wait(drained, 30, "every redelivered message consumed and acked")
    return lost


def test_redis_sigkill_under_load_workers_reconnect_and_missions_run_once(
    server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    starts_log = tmp_path / "agent-starts.log"
    agent = {
        "command": [
            sys.executable,
            str(REPO / "tests" / "agent_script.py"),
            "{prompt_file}",
            "--pause-first",
            "3",
        ],
        "timeout_seconds": 120,
        "env": {"SWARMQ_AGENT_STARTS": str(starts_log)},
    }
    workers = [
        {"id": f"r{n}", "role": "runner", "queues": ["missions"], "agent": agent}
        for n in range(WORKERS)
    ]
    config = write_roster(
        tmp_path,
        "brokerchaos",
        server.url,
        workers=workers,
        missions={
            "heartbeat_seconds": 0.5,
            "stale_after_seconds": 15,
            "reap_after_seconds": 20,
            "reap_every_seconds": 2,
        },
    )
    roster: Roster = load_roster(config, env={})
    supervisor = Supervisor(roster, config, use_tmux=False)
    app = create_app(roster)
    nodes = [celery_hostname(w.id) for w in roster.workers]
    try:
        supervisor.up()
        wait(lambda: answering(roster, nodes) == set(nodes), 60, "every worker answering")
        client = MissionClient(
            roster, celery=app, locks=Cluster.connect(roster.cluster_config()).locks
        )
        reconnects: list[float] = []
        deaf: list[str] = []
        here: list[tuple[float | None, float | None]] = []
        missions: list[str] = []
        for run in range(RUNS):
            batch = [
                client.submit(f"chaos run {run} mission {n}", worker=f"r{n}").id
                for n in range(WORKERS)
            ]
            missions += batch
            wait(
                lambda b=batch: all(starts(starts_log)[m] >= 1 for m in b),  # type: ignore[misc]
                30,
                f"run {run}: every agent started",
            )
            server.kill()  # mid-mission: every agent is in its 3 s pause
            time.sleep(1.0)
            server.start()
            PING_ERRORS.clear()
            took, silent = reconnect(config, nodes)
            if took is None:
                deaf.append(f"run {run}: {', '.join(silent)} (ping errors: {dict(PING_ERRORS)})")
            else:
                reconnects.append(took)
            # This process lived through the kill too: its pooled connections died with it.
            new_app, long_app = in_process(roster, app, nodes)
            here.append((new_app, long_app))
            if new_app is None or long_app is None:
                deaf.append(
                    f"run {run}: this process (new app {new_app}, long-lived app {long_app})"
                    f" ping errors: {dict(PING_ERRORS)}"
                )
            wait(
                lambda b=batch: all(  # type: ignore[misc]
                    client.get(m).state is MissionState.COMPLETE for m in b
                ),
                60,
                f"run {run}: every mission complete",
            )
        redelivered = _redeliver_unacked(roster)
        counted = starts(starts_log)
        assert {m: counted[m] for m in missions} == dict.fromkeys(missions, 1), counted
        for mission_id in missions:  # one assignment each: nothing was reaped or resumed
            (only,) = client.get(mission_id).assignments
            assert only.state is MissionState.COMPLETE and only.attempts == 1
        for spec in supervisor.specs():
            assert supervisor.running(spec), f"{spec.name} is not running"
        print(
            f"\nreconnect after Redis returned (s): {[round(r, 1) for r in reconnects]}; "
            f"in this process after that, new app / long-lived app (s): {here}; "
            f"unacked messages redelivered and skipped: {redelivered}; deaf: {deaf}"
        )
        assert not deaf, (
            f"no ping answered within {RECONNECT_BAR_SECONDS:.0f}s of Redis returning "
            f"({'; '.join(deaf)}): remote control stayed deaf although the "
            "missions completed"
        )
    finally:
        supervisor.down(timeout=20)
        app.close()
