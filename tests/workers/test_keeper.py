"""`swarmq up`'s keeper: a worker process that dies is restarted with backoff and `status` says so;
a deliberate stop (SIGTERM from `down`, an exit with status 0) ends supervision."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarmq.roster.loader import load_roster
from swarmq.storage.clock import parse_iso
from swarmq.storage.procs import pid_alive
from swarmq.workers import keeper
from swarmq.workers.app import create_app
from swarmq.workers.launcher import Supervisor
from swarmq.workers.processes import Kind, celery_hostname
from swarmq.workers.status import collect
from swarmq.workers.tmux import tmux_available


def test_backoff_doubles_up_to_its_ceiling() -> None:
    assert [keeper.backoff(n, 1.0, 60.0) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert keeper.describe_exit(1) == "exit 1"
    assert keeper.describe_exit(-9) == "signal 9 (SIGKILL)"


def test_an_exit_with_status_0_ends_supervision(tmp_path: Path) -> None:
    state = tmp_path / "kept.json"
    done = subprocess.run(
        keeper.command(state, [sys.executable, "-c", "pass"]), timeout=30, check=False
    )
    assert done.returncode == 0
    recorded = keeper.read_state(state)
    assert recorded["restarts"] == 0 and recorded["lastExit"] == "exit 0"


def _wait(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"{what} not within {timeout:.0f}s")


def _pong(roster: Any, node: str) -> bool:
    app = create_app(roster)
    try:
        return bool(app.control.ping(destination=[node], timeout=0.5))
    finally:
        app.close()


@pytest.mark.parametrize(
    "use_tmux",
    [
        False,
        pytest.param(
            True, marks=pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
        ),
    ],
    ids=["background", "tmux"],
)
def test_a_killed_worker_is_restarted_with_backoff_and_shown_in_status(
    roster_file: Path, monkeypatch: pytest.MonkeyPatch, use_tmux: bool
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("SWARMQ_KEEPER_BACKOFF_FIRST", "0.5")  # inherited by the kept processes
    roster = load_roster(roster_file, env={})
    supervisor = Supervisor(roster, roster_file, use_tmux=use_tmux)
    (worker,) = [s for s in supervisor.specs() if s.kind is Kind.WORKER]
    node = celery_hostname(worker.name)
    try:
        supervisor.up()
        keeper_pid = supervisor.pid(worker)
        assert keeper_pid is not None
        _wait(lambda: _pong(roster, node), 60, "the worker answering")
        first = _wait(lambda: keeper.read_state(worker.keeper_state).get("childPid"), 10, "child")

        os.kill(first, signal.SIGKILL)  # the Celery process dies; its keeper does not
        second = _wait(
            lambda: (
                (s := keeper.read_state(worker.keeper_state)).get("restarts") == 1
                and s.get("childPid") not in (None, first)
                and s["childPid"]
            ),
            30,
            "the first restart",
        )
        _wait(lambda: _pong(roster, node), 60, "the restarted worker answering")
        assert supervisor.pid(worker) == keeper_pid  # `status` and `down` still find it

        os.kill(second, signal.SIGKILL)  # again, soon after: the pause doubles
        _wait(
            lambda: keeper.read_state(worker.keeper_state).get("restarts") == 2,
            30,
            "the second restart being scheduled",
        )
        state = keeper.read_state(worker.keeper_state)
        pause = (parse_iso(state["nextStartAt"]) - parse_iso(state["lastExitAt"])).total_seconds()
        assert 0.9 <= pause <= 1.5, state  # 0.5 s, then 1 s
        assert state["lastExit"] == "signal 9 (SIGKILL)"

        (shown,) = [p for p in collect(roster, supervisor).processes if p.name == worker.name]
        assert shown.running and shown.pid == keeper_pid
        assert shown.restarts == 2 and shown.last_exit.startswith("signal 9 (SIGKILL) at ")
        assert shown.supervision().startswith("2 (last: signal 9 (SIGKILL) at ")
        _wait(lambda: keeper.read_state(worker.keeper_state).get("childPid"), 10, "third child")
    finally:
        actions = supervisor.down(timeout=30)
    assert {a.name: a.outcome for a in actions}[worker.name] == "stopped"
    assert not pid_alive(keeper_pid)
    after = keeper.read_state(worker.keeper_state)
    assert after["restarts"] == 2 and after["childPid"] is None  # a stop is not restarted
