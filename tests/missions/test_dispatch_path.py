"""What a mission run does around the agent's exec (issue 15): start recorded after the spawn but
before the agent's output, heartbeats that never wait on a held lock, the lock-free profile
check, and an agent spawned without preexec_fn that still dies with its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from swarmq.missions._runner import run_agent
from swarmq.missions.dispatch import MissionSpec, create_mission
from swarmq.missions.history import read_beat
from swarmq.missions.ledger import Mission
from swarmq.missions.routing import Target, route
from swarmq.profiles.bootstrap import profile_current
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.schema import Roster
from swarmq.storage.locking import LocalLocks, file_resource
from swarmq.wiring.ledger import mission_ledger, mission_runner
from swarmq.wiring.profiles import ensure_roster_profiles
from tests.missions.test_domain import make_roster
from tests.support import REPO


def planned_mission(tmp_path: Path) -> tuple[Roster, LocalLocks, Mission]:
    """A roster with its profiles and one mission planned for worker ``a``."""
    roster = make_roster(tmp_path)
    locks = LocalLocks(tmp_path / "locks")
    ensure_roster_profiles(roster, locks)
    with mission_ledger(roster, locks).edit() as doc:
        mission = create_mission(
            doc, MissionSpec("Goal"), route(roster.workers, Target("a"), live=None, load={})
        )
    return roster, locks, mission


def test_start_events_precede_the_agents_markers(tmp_path: Path) -> None:
    roster, locks, mission = planned_mission(tmp_path)
    assert mission.current is not None
    outcome = mission_runner(roster, "a", locks).run(mission.id, mission.current.id)
    assert outcome.state == "complete"
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    types = [e["type"] for e in read_events(layout, mission.id)]
    assert types[:3] == ["mission-start", "dispatch", "checkpoint"], types
    episodes = "".join(p.read_text() for p in layout.episodes_dir.glob("*.md"))
    assert "mission-start" in episodes and "dispatch" in episodes


def test_heartbeat_does_not_wait_for_a_held_runtime_lock(tmp_path: Path) -> None:
    roster, locks, mission = planned_mission(tmp_path)
    assert mission.current is not None
    runner = mission_runner(roster, "a", locks)
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    result: list[str | None] = []
    with LocalLocks(tmp_path / "locks").hold(file_resource(layout.runtime_json)):  # a dead holder
        beat = threading.Thread(
            target=lambda: result.append(runner._beat(mission.id, mission.current.id))
        )
        beat.start()
        beat.join(timeout=30)
        assert not beat.is_alive(), "the heartbeat waited for runtime.json's lock"
    assert result == [None]
    assert read_beat(roster.runtime_dir, mission.current.id)["token"] == runner.token
    runner._beat(mission.id, mission.current.id)  # lock free again: runtime.json shows the run
    runtime = (layout.runtime_json).read_text()
    assert mission.id in runtime and '"executing"' in runtime


def test_profile_check_is_lock_free_and_says_when_ensure_is_needed(tmp_path: Path) -> None:
    roster = make_roster(tmp_path)
    worker = roster.worker("a")
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    assert not profile_current(layout, worker, roster.swarm)
    ensure_roster_profiles(roster, LocalLocks(tmp_path / "locks"))
    assert profile_current(layout, worker, roster.swarm)
    identity = layout.profile_file("IDENTITY.md")
    identity.write_text("# edited by a person\n")
    assert profile_current(layout, worker, roster.swarm)  # an edited file is kept as it is
    identity.unlink()
    assert not profile_current(layout, worker, roster.swarm)
    # A check that passed is remembered by stat signature; what it checked is still seen.
    ensure_roster_profiles(roster, LocalLocks(tmp_path / "locks"))
    assert profile_current(layout, worker, roster.swarm) and profile_current(
        layout, worker, roster.swarm
    )
    layout.episodes_dir.rmdir()
    assert not profile_current(layout, worker, roster.swarm)
    ensure_roster_profiles(roster, LocalLocks(tmp_path / "locks"))
    assert profile_current(layout, worker, roster.swarm)
    layout.runtime_json.unlink()
    assert not profile_current(layout, worker, roster.swarm)
    ensure_roster_profiles(roster, LocalLocks(tmp_path / "locks"))
    layout.profile_file("SOUL.md").write_text("# edited again\n")
    assert profile_current(layout, worker, roster.swarm)  # re-read: an edit is kept


def test_a_missing_or_unrunnable_agent_could_not_start(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")  # not executable
    for command, why in (
        (["no-such-agent-xyz"], "No such file"),
        ([str(script)], "Permission denied"),
    ):
        result = run_agent(
            command,
            env=dict(os.environ),
            cwd=tmp_path,
            timeout=10,
            transcript=tmp_path / "t.log",
            on_line=lambda line: None,
        )
        assert result.error and "could not start" in result.error and why in result.error, result


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux-only")
def test_agent_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    starter = (
        "import os, sys, time\n"
        "from swarmq.missions._runner import spawn\n"
        "proc = spawn(['sleep', '120'], env=dict(os.environ), cwd=None)\n"
        "print(proc.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", starter],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert parent.stdout is not None
    agent_pid = int(parent.stdout.readline())
    agent = psutil.Process(agent_pid)
    deadline = time.monotonic() + 10
    while agent.name() != "sleep" and time.monotonic() < deadline:  # exec'd past setpriv
        time.sleep(0.01)
    assert agent.name() == "sleep" and os.getpgid(agent_pid) == agent_pid  # its own group
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while (
        time.monotonic() < deadline
        and agent.is_running()
        and agent.status() != psutil.STATUS_ZOMBIE
    ):
        time.sleep(0.05)
    alive = agent.is_running() and agent.status() != psutil.STATUS_ZOMBIE
    if alive:
        agent.kill()
    assert not alive, "the agent outlived the worker that started it"
