"""`swarmq up` refuses what workers could not survive before starting anything, and a failed
`up` stops what it started: real tmux sessions, real workers, real Redis, the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from swarmq.storage.workspace_id import read_root_id
from swarmq.workers.embedded_redis import embedded_for
from tests.coord.redis_server import free_port
from tests.support import REPO, write_roster

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by .ci/run"),
]

LESSON = "Always run the python test suite before pushing to main because CI is slow"


def swarmq(
    cwd: Path, *args: str, config: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SWARMQ_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    env["XDG_CACHE_HOME"] = str(cwd.parent / "cache")  # the implicit roster's runtime
    head = ["--config", str(config)] if config is not None else []
    return subprocess.run(
        [sys.executable, "-m", "swarmq.cli", *head, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )


def tmux_sessions(swarm: str) -> list[str]:
    done = subprocess.run(
        ["tmux", "-L", f"swarmq-{swarm}", "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
    )
    return sorted(done.stdout.split()) if done.returncode == 0 else []


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    return " ".join((done.stderr + done.stdout).split())


def test_workspace_used_without_a_roster_then_given_one(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    config = write_roster(tmp_path, swarm_name, redis_url)
    project = tmp_path / "project"
    (project / ".swarm").mkdir()
    moved = project / "swarm.yaml"
    config.rename(moved)  # the roster lives in the project, as a user adds it
    hidden = tmp_path / "later.yaml"
    moved.rename(hidden)

    added = swarmq(
        project, "knowledge", "add", "--plain", LESSON
    )  # no roster: single-host, recorded
    assert added.returncode == 0, added.stderr
    recorded = read_root_id(project)
    assert recorded is not None and recorded.locks == "single-host"

    hidden.rename(moved)  # now the project has a swarm.yaml (cluster locks)
    started = time.monotonic()
    up = swarmq(project, "up", "--wait", "30")
    assert up.returncode == 1 and time.monotonic() - started < 30, one_line(up)
    assert "`swarmq workspace set-locks cluster`" in one_line(up)
    assert "Traceback" not in up.stderr and tmux_sessions(swarm_name) == []

    listed = swarmq(project / ".swarm", "knowledge", "list", "--json")  # reading needs no mode
    assert listed.returncode == 0 and LESSON in listed.stdout, one_line(listed)
    refused = swarmq(
        project, "knowledge", "add", "--plain", "Never force push to main because it hurts"
    )
    assert refused.returncode == 3 and "set-locks cluster" in one_line(refused)

    switched = swarmq(project, "workspace", "set-locks", "cluster")  # the command it named
    assert switched.returncode == 0, one_line(switched)
    try:
        up = swarmq(project, "up", "--wait", "60")
        assert up.returncode == 0, one_line(up)
        assert tmux_sessions(swarm_name) == ["swarm-w1", "swarmq-beat"]
    finally:
        down = swarmq(project, "down", "--timeout", "20")
    assert down.returncode == 0 and tmux_sessions(swarm_name) == [], one_line(down)


def test_a_broker_that_does_not_answer_is_named_within_seconds(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    broker = f"amqp://guest:s3cret@127.0.0.1:{free_port()}//"  # nothing listens there
    config = write_roster(tmp_path, swarm_name, redis_url, broker_url=broker)
    started = time.monotonic()
    up = swarmq(tmp_path, "up", "--wait", "300", config=config)
    took = time.monotonic() - started
    message = one_line(up)
    # About 5 s on a quiet machine, most of it the CLI's start, and 27 s was seen on a loaded
    # CI machine: what is tested is that the refusal does not wait out --wait (300 s) for a
    # broker that will never answer, so the bound is far from both.
    assert up.returncode == 1 and took < 100, (took, message)
    assert "amqp://guest:***@127.0.0.1" in message and "s3cret" not in message
    assert "Connection refused" in message and "nothing was started" in message
    assert tmux_sessions(swarm_name) == []


def test_a_failed_up_stops_what_it_started_embedded_redis_too(
    tmp_path: Path, swarm_name: str
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing answers: up embeds a Redis there
    config = write_roster(tmp_path, swarm_name, url)
    runtime = tmp_path / "runtime"
    try:
        # No worker answers ping within a fifth of a second (it is still booting): up fails.
        up = swarmq(tmp_path, "up", "--wait", "0.2", config=config)
        message = one_line(up)
        assert up.returncode == 1 and "not answering" in message, message
        assert "stopped what this `up` started: w1, beat, redis" in message, message
        assert tmux_sessions(swarm_name) == []
        assert embedded_for(runtime).pid() is None
    finally:
        swarmq(tmp_path, "down", "--timeout", "5", config=config)
