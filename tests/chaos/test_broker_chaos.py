"""Redis SIGKILLed and restarted under load, three times: the workers `swarmq up` started (kept,
with the beat and its reaper) reconnect and answer a ping within 30 s each time, every mission
in flight completes once, and no agent is started twice.

A Redis of the test's own (AOF, fsync always, as a production broker runs) on a port of its own
(``SWARMQ_CHAOS_REDIS_PORT``, else a free one), so killing it touches nothing else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection

from swarmq.client import MissionClient
from swarmq.coord import keys
from swarmq.coord.cluster import Cluster
from swarmq.missions.states import MissionState
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.workers.app import create_app
from swarmq.workers.launcher import Supervisor
from swarmq.workers.processes import celery_hostname
from tests.coord.redis_server import RedisServer
from tests.support import REPO, write_roster

pytestmark = pytest.mark.slow

WORKERS = 3
RUNS = 3
RECONNECT_BAR_SECONDS = 30.0


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


PING_ERRORS: Counter[str] = Counter()
"""Why pings could not be sent (counted, for the message of a failure)."""


def _answering(roster: Roster, nodes: list[str]) -> set[str]:
    """Who answers a ping from a fresh client (as `swarmq status` asks)."""
    app = create_app(roster)
    try:
        replies = app.control.ping(destination=nodes, timeout=0.5) or []
    except Exception as exc:  # Redis still away: nobody answers yet
        PING_ERRORS[f"{type(exc).__name__}: {exc}"[:200]] += 1
        time.sleep(0.2)
        return set()
    finally:
        app.close()
    return {node for reply in replies for node in reply}


FRESH_PING = """
import json, sys
from swarmq.roster.loader import load_roster
from swarmq.workers.app import create_app
app = create_app(load_roster(sys.argv[1], env={}))
try:
    replies = app.control.ping(destination=sys.argv[2:], timeout=1.0) or []
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:200]}))
else:
    print(json.dumps({"answered": sorted({node for reply in replies for node in reply})}))
"""


def _answering_fresh(config: Path, nodes: list[str]) -> set[str]:
    """Who answers a ping from a new process, as `swarmq status` asks: a client that lived
    through the restarts holds pooled connections the restarts left behind."""
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PING, str(config), *nodes],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    try:
        out = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out = {"error": f"exit {done.returncode}: {done.stderr.strip()[-200:]}"}
    if "error" in out:
        PING_ERRORS[str(out["error"])] += 1
        return set()
    return set(out["answered"])


def _wait(condition: Callable[[], object], timeout: float, what: str) -> float:
    """Seconds until ``condition()`` held; fails the test after ``timeout`` with its last value."""
    started = time.monotonic()
    last: object = None
    while time.monotonic() - started < timeout:
        last = condition()
        if last is True:
            return time.monotonic() - started
        time.sleep(0.1)
    pytest.fail(f"{what} not within {timeout:.0f}s (last: {last})")


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

        _wait(drained, 30, "every redelivered message consumed and acked")
    return lost


def _reconnect(config: Path, nodes: list[str]) -> tuple[float | None, list[str]]:
    """Seconds until every worker answered a ping from a new process after Redis returned, or
    None and the silent ones when the bar passed first."""
    started = time.monotonic()
    answered: set[str] = set()
    while time.monotonic() - started < RECONNECT_BAR_SECONDS:
        answered = _answering_fresh(config, nodes)
        if answered == set(nodes):
            return time.monotonic() - started, []
        time.sleep(0.1)
    return None, sorted(set(nodes) - answered)


def _starts(path: Path) -> Counter[str]:
    """Agent starts per mission (the fake agent appends one line per start)."""
    text = path.read_text("utf-8") if path.exists() else ""
    return Counter(line.split()[0] for line in text.splitlines() if line.strip())


def test_redis_sigkill_under_load_workers_reconnect_and_missions_run_once(
    server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    starts = tmp_path / "agent-starts.log"
    agent = {
        "command": [
            sys.executable,
            str(REPO / "tests" / "agent_script.py"),
            "{prompt_file}",
            "--pause-first",
            "3",
        ],
        "timeout_seconds": 120,
        "env": {"SWARMQ_AGENT_STARTS": str(starts)},
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
        _wait(lambda: _answering(roster, nodes) == set(nodes), 60, "every worker answering")
        client = MissionClient(
            roster, celery=app, locks=Cluster.connect(roster.cluster_config()).locks
        )
        reconnects: list[float] = []
        deaf: list[str] = []
        missions: list[str] = []
        for run in range(RUNS):
            batch = [
                client.submit(f"chaos run {run} mission {n}", worker=f"r{n}").id
                for n in range(WORKERS)
            ]
            missions += batch
            _wait(
                lambda b=batch: all(_starts(starts)[m] >= 1 for m in b),  # type: ignore[misc]
                30,
                f"run {run}: every agent started",
            )
            server.kill()  # mid-mission: every agent is in its 3 s pause
            time.sleep(1.0)
            server.start()
            PING_ERRORS.clear()
            took, silent = _reconnect(config, nodes)
            if took is None:
                deaf.append(f"run {run}: {', '.join(silent)} (ping errors: {dict(PING_ERRORS)})")
            else:
                reconnects.append(took)
            _wait(
                lambda b=batch: all(  # type: ignore[misc]
                    client.get(m).state is MissionState.COMPLETE for m in b
                ),
                60,
                f"run {run}: every mission complete",
            )
        redelivered = _redeliver_unacked(roster)
        counted = _starts(starts)
        assert {m: counted[m] for m in missions} == dict.fromkeys(missions, 1), counted
        for mission_id in missions:  # one assignment each: nothing was reaped or resumed
            (only,) = client.get(mission_id).assignments
            assert only.state is MissionState.COMPLETE and only.attempts == 1
        for spec in supervisor.specs():
            assert supervisor.running(spec), f"{spec.name} is not running"
        print(
            f"\nreconnect after Redis returned (s): {[round(r, 1) for r in reconnects]}; "
            f"unacked messages redelivered and skipped: {redelivered}; deaf: {deaf}"
        )
        assert not deaf, (
            f"no ping answered within {RECONNECT_BAR_SECONDS:.0f}s of Redis returning "
            f"({'; '.join(deaf)}): remote control stayed deaf to a new process although the "
            "missions completed"
        )
    finally:
        supervisor.down(timeout=20)
        app.close()
