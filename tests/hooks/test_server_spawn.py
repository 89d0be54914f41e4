"""A hook started from a directory holding another ``swarmq`` (a clone of swarmq, with swarmq
installed from it as a regular package) starts a server that runs the installed swarmq, the
hook's own: ``python -m`` would put that directory first on ``sys.path``, and a server of other
code declines every command the CLI asks it (its code stamp differs)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from swarmq.hooks._wire import request
from swarmq.hooks.client import start_server
from swarmq.storage.statedir import swarm_state_dir
from tests.hooks.support import stop_hook_server
from tests.support import write_roster


def test_server_runs_the_hooks_swarmq_not_the_working_directorys(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
) -> None:
    clone = tmp_path / "clone"
    (clone / "swarmq").mkdir(parents=True)
    (clone / "swarmq" / "__init__.py").write_text("raise SystemExit('the working directory')\n")
    roster = write_roster(clone, swarm_name, redis_url)
    state_root = tmp_path / "state"
    monkeypatch.setenv("SWARMQ_STATE", str(state_root))
    monkeypatch.chdir(clone)
    state = swarm_state_dir(roster)
    assert start_server(roster, state)
    try:
        deadline = time.monotonic() + 90
        answer = None
        while answer is None and time.monotonic() < deadline:
            time.sleep(0.2)
            answer = request(state, {"op": "ping"}, 2.0)
        assert answer is not None, (state / "server.log").read_text(errors="replace")[-2000:]
    finally:
        stop_hook_server(roster, state_root)
