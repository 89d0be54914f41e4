"""Mission domain code with local locks: states, ledger, routing, markers, prompt budget, runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from swarmq.missions._markers import MarkerKind, MarkerStream
from swarmq.missions.context import MissionContext, render_prompt
from swarmq.missions.dispatch import (
    MissionSpec,
    cancel_mission,
    create_mission,
    resume_mission,
)
from swarmq.missions.ledger import LedgerCorrupt
from swarmq.missions.routing import Target, route
from swarmq.missions.states import (
    MISSION_TRANSITIONS,
    TERMINAL,
    MissionState,
    TransitionError,
)
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.ledger import mission_ledger, mission_runner
from swarmq.wiring.profiles import ensure_roster_profiles
from tests.support import REPO, write_roster

S = MissionState


def make_roster(tmp_path: Path, *flags: str, timeout: float = 20) -> Roster:
    agent = {
        "command": [
            sys.executable,
            str(REPO / "tests" / "agent_script.py"),
            "{prompt_file}",
            *flags,
        ],
        "timeout_seconds": timeout,
    }
    path = write_roster(
        tmp_path,
        "dom",
        "redis://127.0.0.1:6379/15",
        workers=[
            {
                "id": "a",
                "role": "builder",
                "specialty": "backend",
                "queues": ["missions"],
                "agent": agent,
            },
            {"id": "b", "role": "builder", "queues": ["missions"], "agent": agent},
            {"id": "c", "role": "curator", "queues": ["curator"]},
        ],
        missions={"heartbeat_seconds": 0.2, "kill_grace_seconds": 0.5},
    )
    return load_roster(path, env={})


def test_terminal_states_have_no_exits() -> None:
    assert all(not MISSION_TRANSITIONS[s] for s in TERMINAL)
    assert S.EXECUTING in MISSION_TRANSITIONS[S.FAILED]  # failed missions can be resumed


def test_routing_rules(tmp_path: Path) -> None:
    workers = make_roster(tmp_path).workers
    assert (
        route(workers, Target(role="builder"), live={"a", "b"}, load={"a": 2, "b": 1}).worker_id
        == "b"
    )
    assert (
        route(
            workers, Target(role="builder", specialty="backend"), live={"a", "b"}, load={"a": 5}
        ).worker_id
        == "a"
    )
    assert route(workers, Target(role="builder"), live={"b"}, load={"b": 9}).worker_id == "b"
    dead = route(workers, Target(role="builder"), live=set(), load={})
    assert dead.state is S.BLOCKED and "no live worker" in dead.reason
    assert route(workers, Target(role="curator"), live=None, load={}).state is S.FAILED
    assert route(workers, Target(role="nobody"), live=None, load={}).state is S.FAILED


def test_ledger_idempotency_cancel_resume_and_corruption(tmp_path: Path) -> None:
    roster = make_roster(tmp_path)
    ledger = mission_ledger(roster, LocalLocks(tmp_path / "locks"))
    with ledger.edit() as doc:
        decision = route(roster.workers, Target("a"), live={"a"}, load=doc.load())
        mission = create_mission(
            doc, MissionSpec("Do it", target=Target("a"), client_key="k"), decision
        )
    assert ledger.read().client_keys == {"k": mission.id}
    with ledger.edit() as doc:
        assert doc.load() == {"a": 1}
        with pytest.raises(TransitionError):
            doc.get(mission.id).move(S.COMPLETE)  # planning -> complete is not allowed
        resume_ok = doc.get(mission.id)
    assert resume_ok.state is S.PLANNING
    with ledger.edit() as doc:
        cancelled = cancel_mission(doc, mission.id, "changed plans")
        assert cancelled.assignments[0].state is S.CANCELLED
        with pytest.raises(TransitionError):
            resume_mission(doc, mission.id, decision)
    raw = ledger.path.read_text()
    ledger.path.write_text(raw[:-20])
    with pytest.raises(LedgerCorrupt, match="left untouched"), ledger.edit():
        pass
    assert ledger.path.read_text() == raw[:-20]


def test_marker_stream() -> None:
    stream = MarkerStream()
    lines = [
        "noise",
        "- **CHECKPOINT:** did a",
        "FILES: x.py, y.py",
        "STATE: DONE",
        "BEGIN HANDOFF",
        "## Completed",
        "- a",
        "END HANDOFF",
        "checkpoint: lowercase is prose",
    ]
    markers = [m for line in lines for m in stream.feed(line)]
    kinds = [m.kind for m in markers]
    assert kinds == [
        MarkerKind.CHECKPOINT,
        MarkerKind.FILE,
        MarkerKind.FILE,
        MarkerKind.STATE,
        MarkerKind.HANDOFF,
    ]
    assert markers[0].text == "did a" and markers[3].state is S.COMPLETE
    assert markers[4].text == "## Completed\n- a"


def test_prompt_respects_budget(tmp_path: Path) -> None:
    roster = make_roster(tmp_path)
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    ledger = mission_ledger(roster, LocalLocks(tmp_path / "locks"))
    with ledger.edit() as doc:
        mission = create_mission(
            doc,
            MissionSpec("Objective text"),
            route(roster.workers, Target("a"), live=None, load={}),
        )
    ctx = MissionContext(memory="m" * 50_000, episodes="e" * 50_000, summary="SUMMARY")
    assert mission.current is not None
    prompt = render_prompt(layout, mission, mission.current, ctx, resume=True, budget_chars=3_000)
    assert (
        len(prompt) <= 3_000
        and "Objective text" in prompt
        and "SUMMARY" in prompt
        and "RESUMING" in prompt
    )


@pytest.mark.parametrize(
    ("flags", "state", "reason"),
    [
        ((), "complete", "3 tests pass"),
        (("--review",), "review", "3 tests pass"),
        (("--exit", "4"), "failed", "exited with status 4"),
        (("--hang",), "failed", "timed out after 1s"),
        (("--block",), "blocked", "staging credentials"),
    ],
)
def test_runs_settle_with_reason(
    tmp_path: Path, flags: tuple[str, ...], state: str, reason: str
) -> None:
    roster = make_roster(tmp_path, *flags, timeout=1 if "--hang" in flags else 20)
    locks = LocalLocks(tmp_path / "locks")
    ensure_roster_profiles(roster, locks)
    ledger = mission_ledger(roster, locks)
    with ledger.edit() as doc:
        mission = create_mission(
            doc, MissionSpec("Goal"), route(roster.workers, Target("a"), live=None, load={})
        )
    assert mission.current is not None
    outcome = mission_runner(roster, "a", locks).run(mission.id, mission.current.id)
    assert outcome.state == state and reason in outcome.reason
    layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "a")
    events = read_events(layout, mission.id)
    assert events[-1]["type"] == "handoff-written"
    assert layout.handoff(mission.id).read_text().startswith("# Handoff — a — ")
    assert ledger.read().get(mission.id).state.value == state
    runtime = json.loads(layout.runtime_json.read_text())
    assert runtime["lastOutcome"] == state
    again = mission_runner(roster, "a", locks).run(mission.id, mission.current.id)
    assert again.state == "skipped" and len(read_events(layout, mission.id)) == len(events)
