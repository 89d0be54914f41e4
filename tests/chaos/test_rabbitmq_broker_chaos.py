"""RabbitMQ SIGKILLed and restarted under load, three times: the workers `swarmq up` started
(kept, with the beat and its reaper) reconnect and answer a ping within 30 s of the broker
returning, every mission in flight completes once, no agent is started twice and no worker
process dies.

A RabbitMQ node of the test's own (node name, AMQP and distribution ports, Mnesia, logs and
cookie of its own, see :mod:`tests.chaos.rabbitmq_server`), killed with SIGKILL and restarted on
the same Mnesia directory; results and locks live in a Redis of the test's own that stays up.
One worker's agent finishes while the broker is away (its late ack has no channel to go to);
the other two are still running when it returns, so RabbitMQ, which requeues every unacked
message of a closed connection, hands their messages out again while the first run holds the
mission: both cases must end in one start per mission and empty queues.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.missions.states import MissionState
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.workers.app import create_app
from swarmq.workers.keeper import read_state
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
from tests.chaos.rabbitmq_server import RabbitMQServer, server_script
from tests.coord.redis_server import RedisServer
from tests.support import REPO, write_roster

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        server_script() is None,
        reason="rabbitmq-server is not installed (or set SWARMQ_CHAOS_RABBITMQ_SERVER)",
    ),
]

RUNS = 3
PAUSES = {"r0": 2.0, "r1": 20.0, "r2": 20.0}
"""Seconds each worker's agent pauses after it started: r0 ends during the outage (a node
restart takes 6-10 s here), r1 and r2 outlive it."""


@pytest.fixture
def rabbit(tmp_path: Path) -> Iterator[RabbitMQServer]:
    running = RabbitMQServer(tmp_path / "rabbitmq").start()
    try:
        yield running
    finally:
        running.kill()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    running = RedisServer(directory).start()
    try:
        yield running
    finally:
        running.stop()


def _queues(rabbit: RabbitMQServer) -> dict[str, tuple[int, int]]:
    """Ready and unacknowledged messages per queue, as the node counts them."""
    out: dict[str, tuple[int, int]] = {}
    for line in rabbit.ctl(
        "list_queues", "name", "messages_ready", "messages_unacknowledged"
    ).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            out[parts[0]] = (int(parts[1]), int(parts[2]))
    return out


def test_rabbitmq_sigkill_under_load_workers_reconnect_and_missions_run_once(
    rabbit: RabbitMQServer,
    redis_server: RedisServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    starts_log = tmp_path / "agent-starts.log"

    def agent(pause: float) -> dict[str, Any]:
        return {
            "command": [
                sys.executable,
                str(REPO / "tests" / "agent_script.py"),
                "{prompt_file}",
                "--pause-first",
                str(pause),
            ],
            "timeout_seconds": 120,
            "env": {"SWARMQ_AGENT_STARTS": str(starts_log)},
        }

    workers = [
        {"id": wid, "role": "runner", "queues": ["missions"], "agent": agent(pause)}
        for wid, pause in PAUSES.items()
    ]
    config = write_roster(
        tmp_path,
        "rabbitchaos",
        redis_server.url,
        broker_url=rabbit.url,
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
        outages: list[float] = []
        deaf: list[str] = []
        here: list[tuple[float | None, float | None]] = []
        missions: list[str] = []
        for run in range(RUNS):
            batch = [
                client.submit(f"chaos run {run} mission {wid}", worker=wid).id for wid in PAUSES
            ]
            missions += batch
            wait(
                lambda b=batch: all(starts(starts_log)[m] >= 1 for m in b),  # type: ignore[misc]
                30,
                f"run {run}: every agent started",
            )
            killed = time.monotonic()
            rabbit.kill()  # mid-mission: every agent is in its pause
            time.sleep(1.0)
            rabbit.start()
            outages.append(time.monotonic() - killed)
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
                90,
                f"run {run}: every mission complete",
            )
        # Every message the kills handed out again was consumed, found its mission settled or
        # running under a live claim, and acked: nothing left ready or unacked on the queues the
        # workers consume (a settled mission also queues forge work no worker here takes).
        consumed = {"missions", *(w.direct_queue for w in roster.workers)}

        def drained() -> object:
            counts = {q: c for q, c in _queues(rabbit).items() if q in consumed}
            return True if all(c == (0, 0) for c in counts.values()) else counts

        wait(drained, 60, "every mission queue empty and nothing unacked")
        counted = starts(starts_log)
        assert {m: counted[m] for m in missions} == dict.fromkeys(missions, 1), counted
        for mission_id in missions:  # one assignment each: nothing was reaped or resumed
            (only,) = client.get(mission_id).assignments
            assert only.state is MissionState.COMPLETE and only.attempts == 1
        for spec in supervisor.specs():
            assert supervisor.running(spec), f"{spec.name} is not running"
            kept = read_state(spec.keeper_state)
            assert int(kept.get("restarts", 0)) == 0, f"{spec.name} exited: {kept}"
        print(
            f"\noutage (kill to AMQP accepted) (s): {[round(o, 1) for o in outages]}; "
            f"in this process after that, new app / long-lived app (s): {here}; "
            f"reconnect after RabbitMQ returned (s): {[round(r, 1) for r in reconnects]}; "
            f"deaf: {deaf}"
        )
        assert not deaf, (
            f"no ping answered within {RECONNECT_BAR_SECONDS:.0f}s of RabbitMQ returning "
            f"({'; '.join(deaf)})"
        )
    finally:
        supervisor.down(timeout=20)
        app.close()


CONSUMER_TIMEOUT_MS = 5000
"""RabbitMQ's ``consumer_timeout`` for the second test: far below the mission's run time."""

TICK = "{channel_tick_interval, 2000}"
"""A channel checks its deliveries' age on every tick, once a minute by default: every 2 s here,
so the channel is closed 5-7 s into the run rather than 60 s."""

AGENT_PAUSE_SECONDS = "25"
"""The mission outlives the closed channel by far: the requeued delivery comes back to the
worker while the first run still holds the mission."""


def test_rabbitmq_consumer_timeout_shorter_than_a_mission_costs_a_reconnect_not_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RabbitMQ closes the channel of a delivery left unacked past ``consumer_timeout`` (30 min
    by default) and requeues it, so under ``acks_late`` every mission longer than that meets
    it. The worker must treat it as a lost connection (reconnect, keep the run going), and the
    requeued message must be skipped as the duplicate of a live, then settled, run: one start,
    one attempt, an empty queue, no worker exit."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    (tmp_path / "redis").mkdir()
    rabbit = RabbitMQServer(
        tmp_path / "rabbitmq", config=f"consumer_timeout = {CONSUMER_TIMEOUT_MS}\n", advanced=TICK
    )
    redis_server = RedisServer(tmp_path / "redis")
    starts_log = tmp_path / "agent-starts.log"
    agent = {
        "command": [
            sys.executable,
            str(REPO / "tests" / "agent_script.py"),
            "{prompt_file}",
            "--pause-first",
            AGENT_PAUSE_SECONDS,
        ],
        "timeout_seconds": 200,
        "env": {"SWARMQ_AGENT_STARTS": str(starts_log)},
    }
    rabbit.start()
    try:
        redis_server.start()
        config = write_roster(
            tmp_path,
            "rabbittimeout",
            redis_server.url,
            broker_url=rabbit.url,
            workers=[{"id": "r0", "role": "runner", "queues": ["missions"], "agent": agent}],
            missions={"heartbeat_seconds": 0.5},
        )
        roster: Roster = load_roster(config, env={})
        supervisor = Supervisor(roster, config, use_tmux=False)
        app = create_app(roster)
        nodes = [celery_hostname("r0")]
        try:
            supervisor.up()
            wait(lambda: answering(roster, nodes) == set(nodes), 60, "the worker answering")
            client = MissionClient(
                roster, celery=app, locks=Cluster.connect(roster.cluster_config()).locks
            )
            mission_id = client.submit("outlive the consumer timeout", worker="r0").id
            wait(
                lambda: client.get(mission_id).state is MissionState.COMPLETE,
                150,
                "the mission complete",
            )
            log = next((roster.runtime_dir / "hosts").glob("*/logs/*r0.log")).read_text("utf-8")
            assert "delivery acknowledgement on channel" in log, "the channel never timed out"
            consumed = {"missions", roster.workers[0].direct_queue}

            def drained() -> object:
                counts = {q: c for q, c in _queues(rabbit).items() if q in consumed}
                return True if all(c == (0, 0) for c in counts.values()) else counts

            wait(drained, 30, "the requeued message consumed, skipped and acked")
            assert starts(starts_log)[mission_id] == 1, starts(starts_log)
            (only,) = client.get(mission_id).assignments
            assert only.state is MissionState.COMPLETE and only.attempts == 1
            for spec in supervisor.specs():
                assert supervisor.running(spec), f"{spec.name} is not running"
                kept = read_state(spec.keeper_state)
                assert int(kept.get("restarts", 0)) == 0, f"{spec.name} exited: {kept}"
        finally:
            supervisor.down(timeout=20)
            app.close()
    finally:
        rabbit.kill()
        redis_server.stop()
