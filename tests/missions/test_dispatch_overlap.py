"""What overlaps the agent's exec (issue 15 item 2, round 2): the knowledge block shown before
the spawn is recorded after it and before the run settles; the claim, decided before the spawn,
commits while the agent starts, and a commit that fails stops the agent and records nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from swarmq.missions.dispatch import MissionSpec, create_mission
from swarmq.missions.history import read_beat
from swarmq.missions.ledger import Mission
from swarmq.missions.routing import Target, route
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.schema import Roster
from swarmq.storage.locking import CommitUnconfirmed, Lease, LocalLocks, file_resource
from swarmq.storage.procs import pid_alive
from swarmq.wiring.ledger import mission_ledger, mission_runner
from swarmq.wiring.profiles import ensure_roster_profiles
from tests.missions.test_domain import make_roster


def submit(roster: Roster, locks: LocalLocks) -> Mission:
    ensure_roster_profiles(roster, locks)
    with mission_ledger(roster, locks).edit() as doc:
        mission = create_mission(
            doc, MissionSpec("Goal"), route(roster.workers, Target("a"), live=None, load={})
        )
    assert mission.current is not None
    return mission


def test_knowledge_is_shown_before_the_spawn_and_recorded_after_it(tmp_path: Path) -> None:
    roster = make_roster(tmp_path)
    locks = LocalLocks(tmp_path / "locks")
    mission = submit(roster, locks)
    assert mission.current is not None
    assignment_id = mission.current.id
    seen: list[tuple[object, str]] = []

    def record() -> None:  # what the agent's process and the ledger look like at that moment
        state = mission_ledger(roster, locks).read().get(mission.id).assignment(assignment_id).state
        seen.append((read_beat(roster.runtime_dir, assignment_id).get("agentPid"), state.value))

    runner = mission_runner(
        roster, "a", locks, knowledge=lambda query, budget: "KB-DIRECTIVE-7", after_start=record
    )
    assert runner.run(mission.id, assignment_id).state == "complete"
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    assert (
        "KB-DIRECTIVE-7"
        in (layout.mission_dir(mission.id) / f"prompt-{assignment_id}.txt").read_text()
    )
    assert len(seen) == 1, "recorded once"
    agent_pid, state = seen[0]
    assert isinstance(agent_pid, int), "recorded only once the agent was spawned"
    assert state == "executing", "recorded before the run settled"


def test_a_knowledge_record_that_keeps_failing_is_retried_then_noted(tmp_path: Path) -> None:
    roster = make_roster(tmp_path)
    locks = LocalLocks(tmp_path / "locks")
    mission = submit(roster, locks)
    assert mission.current is not None
    calls: list[int] = []

    def record() -> None:
        calls.append(1)
        raise OSError("disk full")

    runner = mission_runner(
        roster, "a", locks, knowledge=lambda query, budget: "KB", after_start=record
    )
    assert runner.run(mission.id, mission.current.id).state == "complete"  # knowledge is optional
    assert len(calls) == 2, "retried once before settling"
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    notes = [e["summary"] for e in read_events(layout, mission.id) if e["type"] == "note"]
    assert any("not recorded: OSError: disk full" in n for n in notes), notes


@dataclass
class LapsedLease:
    """A lease whose lock lapsed while its holder wrote (a Redis lease can; flock cannot)."""

    inner: Lease

    @property
    def resource(self) -> str:
        return self.inner.resource

    @property
    def fencing_token(self) -> int:
        return self.inner.fencing_token

    def validate(self, recorded_token: int) -> int:
        return self.inner.validate(recorded_token)

    def confirm(self) -> None:
        raise CommitUnconfirmed(f"lease on {self.resource} lapsed before the commit was confirmed")


class LapsingLedgerLocks(LocalLocks):
    """Real flocks; the next ledger hold after :attr:`armed` is set lapses at its commit."""

    def __init__(self, lock_dir: Path, ledger_resource: str) -> None:
        super().__init__(lock_dir)
        self.ledger_resource = ledger_resource
        self.armed = False

    @contextlib.contextmanager
    def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
        with super().hold(resource, timeout=timeout) as lease:
            if self.armed and resource == self.ledger_resource:
                self.armed = False
                yield LapsedLease(lease)
            else:
                yield lease


def test_a_claim_whose_commit_fails_stops_the_agent_and_records_nothing(tmp_path: Path) -> None:
    roster = make_roster(tmp_path, "--pause-first", "5")
    ledger = mission_ledger(roster, LocalLocks(tmp_path / "locks"))
    locks = LapsingLedgerLocks(tmp_path / "locks", file_resource(ledger.path))
    mission = submit(roster, locks)
    assert mission.current is not None
    locks.armed = True
    with pytest.raises(CommitUnconfirmed):
        mission_runner(roster, "a", locks).run(mission.id, mission.current.id)
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    started = layout.mission_dir(mission.id) / "agent-started-1"
    if started.exists():  # the agent got as far as its first line: it must be gone now
        assert not pid_alive(int(started.read_text()))
    assert read_events(layout, mission.id) == [], (
        "no start or final events for an uncommitted claim"
    )
