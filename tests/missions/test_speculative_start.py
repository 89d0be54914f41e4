"""The speculative start (issue 15 item 2, round 3): a first delivery's record starts the agent,
the claim commits after the spawn, the client's later commit never overwrites it, and a claim
that cannot commit stops the agent and records nothing."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.connection import lua_sha
from swarmq.coord.locks import RedisLocks
from swarmq.missions.dispatch import (
    Committed,
    MissionConflict,
    MissionSpec,
    commit_created,
    create_mission,
)
from swarmq.missions.ledger import LedgerDoc, Mission
from swarmq.missions.routing import Target, route
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.schema import Roster
from swarmq.storage.locking import CommitUnconfirmed, LocalLocks, file_resource
from swarmq.storage.procs import pid_alive
from swarmq.wiring.ledger import mission_ledger, mission_runner
from swarmq.wiring.profiles import ensure_roster_profiles
from tests.coord.reply_loss import ReplyLoss
from tests.missions.test_dispatch_overlap import LapsingLedgerLocks
from tests.missions.test_domain import make_roster


def created(
    roster: Roster, objective: str = "Goal", key: str | None = None, mission_id: str | None = None
) -> Mission:
    """A record as ``submit`` makes it on its lock-free snapshot: not in the ledger."""
    spec = MissionSpec(objective, client_key=key, target=Target("a"), mission_id=mission_id)
    mission = create_mission(
        LedgerDoc(), spec, route(roster.workers, Target("a"), live=None, load={})
    )
    assert mission.current is not None
    return mission


def test_the_claim_creates_the_mission_and_the_later_commit_keeps_its_run(tmp_path: Path) -> None:
    roster = make_roster(tmp_path)
    locks = LocalLocks(tmp_path / "locks")
    ensure_roster_profiles(roster, locks)
    mission = created(roster, key="k1")
    assert mission.current is not None
    outcome = mission_runner(roster, "a", locks).run(mission.id, mission.current.id, mission.dump())
    assert outcome.state == "complete" and outcome.attempt == 1
    ledger = mission_ledger(roster, locks)
    with ledger.edit() as doc:  # the submit's own commit lands only now
        stored, how = commit_created(doc, mission)
    assert how is Committed.CLAIMED and stored.state.value == "complete"
    doc = ledger.read()
    assert doc.get(mission.id).state.value == "complete" and doc.key_owner("k1") == mission.id
    with ledger.edit() as doc:  # a concurrent submit with the same key: the first owns it
        other, how = commit_created(doc, created(roster, key="k1"))
    assert how is Committed.TAKEN and other.id == mission.id
    with pytest.raises(MissionConflict), ledger.edit() as doc:  # a caller-chosen id, taken
        commit_created(doc, created(roster, mission_id=mission.id))
    types = [
        e["type"]
        for e in read_events(ProfileLayout(roster.profiles_dir, roster.shared_dir, "a"), mission.id)
    ]
    assert types.count("mission-start") == 1 and types.count("complete") == 1


def test_a_speculative_claim_that_cannot_commit_stops_the_agent_and_records_nothing(
    tmp_path: Path,
) -> None:
    roster = make_roster(tmp_path, "--pause-first", "5")
    ledger = mission_ledger(roster, LocalLocks(tmp_path / "locks"))
    locks = LapsingLedgerLocks(tmp_path / "locks", file_resource(ledger.path))
    ensure_roster_profiles(roster, locks)
    mission = created(roster)
    assert mission.current is not None
    locks.armed = True
    with pytest.raises(CommitUnconfirmed):
        mission_runner(roster, "a", locks).run(mission.id, mission.current.id, mission.dump())
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    started = layout.mission_dir(mission.id) / "agent-started-1"
    if started.exists():  # the agent got as far as its first line: it must be gone now
        assert not pid_alive(int(started.read_text()))
    assert read_events(layout, mission.id) == []


@pytest.mark.parametrize("case", ["another worker's", "unusable"])
def test_a_record_that_is_not_a_first_start_here_falls_back_to_the_ledger(
    tmp_path: Path, case: str
) -> None:
    roster = make_roster(tmp_path)
    locks = LocalLocks(tmp_path / "locks")
    ensure_roster_profiles(roster, locks)
    mission = created(roster)
    assert mission.current is not None
    if case == "another worker's":  # never started: not b's, and not in the ledger either
        outcome = mission_runner(roster, "b", locks).run(
            mission.id, mission.current.id, mission.dump()
        )
        assert outcome.state == "skipped"
        assert mission_ledger(roster, locks).read().missions == {}
        return
    with mission_ledger(roster, locks).edit() as doc:  # committed; the message is garbled
        commit_created(doc, mission)
    outcome = mission_runner(roster, "a", locks).run(
        mission.id, mission.current.id, {"id": mission.id, "title": 3}
    )
    assert outcome.state == "complete" and outcome.attempt == 1


def test_a_claim_whose_lock_release_answer_was_lost_runs_the_agent_once(tmp_path: Path) -> None:
    """The broker chaos test's double start, made on purpose: Redis runs the release that
    confirms the speculative claim's commit and its answer is lost (a SIGKILL between its AOF
    fsync and its reply); the lock asks again once Redis answers. Before, that second release
    found the lock gone and called the landed claim unconfirmed: the agent was killed, the task
    failed and the assignment stayed executing under a claim nobody beat, so the reaper resumed
    the mission and started its agent a second time. Now the release's receipt confirms it."""
    roster = make_roster(tmp_path)
    swarm = f"replyloss-{uuid.uuid4().hex[:8]}"
    with ReplyLoss() as proxy:
        client = redis.Redis.from_url(proxy.url(15), socket_connect_timeout=2, socket_timeout=5)
        locks = RedisLocks(client, swarm, url=proxy.url(15), outage_grace_seconds=5.0)
        try:
            ensure_roster_profiles(roster, locks)
            mission = created(roster)
            assert mission.current is not None
            ledger = mission_ledger(roster, locks)
            proxy.arm(
                lua_sha("lock_release").encode(),
                keys.lock(swarm, file_resource(ledger.path)).encode(),
            )
            outcome = mission_runner(roster, "a", locks).run(
                mission.id, mission.current.id, mission.dump()
            )
        finally:
            direct = redis.Redis.from_url("redis://127.0.0.1:6379/15")
            for key in direct.scan_iter(f"{keys.prefix(swarm)}*"):
                direct.delete(key)
    assert len(proxy.lost) == 1, "the claim's release ran and its answer was lost"
    assert outcome.state == "complete" and outcome.attempt == 1
    (only,) = ledger.read().get(mission.id).assignments
    assert only.state.value == "complete" and only.attempts == 1 and only.claim is None
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    assert sorted(p.name for p in layout.mission_dir(mission.id).glob("agent-started-*")) == [
        "agent-started-1"
    ]
