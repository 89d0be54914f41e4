"""The ledger stays small: finished missions retire to the archive and index; heartbeats are files."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from swarmq.client import MissionClient
from swarmq.missions.dispatch import (
    MissionSpec,
    cancel_mission,
    create_mission,
    existing_for_key,
)
from swarmq.missions.history import beat_path, read_beat
from swarmq.missions.ledger import Ledger
from swarmq.missions.routing import Target, route
from swarmq.missions.states import MissionState
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.ledger import mission_ledger, mission_runner
from swarmq.wiring.profiles import ensure_roster_profiles
from tests.support import REPO, write_roster

S = MissionState


def make_roster(tmp_path: Path, *flags: str, keep: int = 0) -> Roster:
    agent = {
        "command": [
            sys.executable,
            str(REPO / "tests" / "agent_script.py"),
            "{prompt_file}",
            *flags,
        ],
        "timeout_seconds": 20,
    }
    path = write_roster(
        tmp_path,
        "hist",
        "redis://127.0.0.1:6379/15",
        workers=[{"id": "a", "role": "builder", "queues": ["missions"], "agent": agent}],
        missions={
            "heartbeat_seconds": 0.1,
            "kill_grace_seconds": 0.5,
            "ledger_keep_finished": keep,
        },
    )
    return load_roster(path, env={})


def submit(ledger: Ledger, roster: Roster, objective: str, key: str | None = None) -> str:
    with ledger.edit() as doc:
        decision = route(roster.workers, Target("a"), live=None, load=doc.load())
        return create_mission(
            doc, MissionSpec(objective, target=Target("a"), client_key=key), decision
        ).id


def test_finished_missions_retire_and_stay_findable(tmp_path: Path) -> None:
    roster = make_roster(tmp_path, keep=1)
    locks = LocalLocks(tmp_path / "locks")
    ledger = mission_ledger(roster, locks)
    ids = [submit(ledger, roster, f"goal {n}", key=f"k{n}") for n in range(3)]
    for mission_id in ids:
        with ledger.edit() as doc:
            cancel_mission(doc, mission_id, "superseded")
    view = json.loads(ledger.path.read_text())
    assert list(view["missions"]) == [ids[2]] and view["clientKeys"] == {"k2": ids[2]}  # keep=1
    archive = roster.shared_dir / "swarm" / "missions"
    for mission_id in ids[:2]:
        record = json.loads((archive / mission_id / "mission.json").read_text())
        assert record["state"] == "cancelled" and record["retired"] is True and record["log"]
    doc = ledger.read()
    assert doc.get(ids[0]).state is S.CANCELLED  # read through to the archive
    found = existing_for_key(doc, "k0")
    assert found is not None and found.id == ids[0]  # idempotency survives retirement
    client = MissionClient(roster, locks=locks)
    listed = client.list()
    assert [m.id for m in listed] == ids[::-1] and all(m.state is S.CANCELLED for m in listed)
    assert [m.id for m in client.list(worker="a", limit=2)] == ids[:0:-1]
    assert client.list(state="planning") == []
    assert client.cancel(ids[0]).state is S.CANCELLED  # cancelling a retired mission is a no-op
    again = client.submit("goal 0", worker="a", client_key="k0")
    assert again.id == ids[0] and again.state is S.CANCELLED
    index = (roster.runtime_dir / "missions-index.jsonl").read_text().splitlines()
    assert len(index) == 2 and all("log" not in json.loads(line) for line in index)


def test_heartbeats_do_not_rewrite_the_ledger(tmp_path: Path) -> None:
    roster = make_roster(tmp_path, "--pause-first", "1.5", keep=5)
    locks = LocalLocks(tmp_path / "locks")
    ensure_roster_profiles(roster, locks)
    ledger = mission_ledger(roster, locks)
    mission_id = submit(ledger, roster, "beat a while")
    assignment_id = ledger.read().get(mission_id).current_assignment_id
    assert assignment_id is not None
    writes: list[int] = []
    beats: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if ledger.path.exists():
                writes.append(ledger.path.stat().st_mtime_ns)
            beat = read_beat(roster.runtime_dir, assignment_id)
            if beat.get("heartbeatAt"):
                beats.append(str(beat["heartbeatAt"]))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        outcome = mission_runner(roster, "a", locks).run(mission_id, assignment_id)
    finally:
        done.set()
        watcher.join()
    assert outcome.state == "complete", outcome
    assert len(set(beats)) >= 5  # the heartbeat file moved many times during the pause...
    assert len(set(writes)) <= 3  # ...while the ledger was written only to claim and settle
    assert not beat_path(roster.runtime_dir, assignment_id).exists()  # cleared at settle


def test_cancel_stops_a_running_agent_through_its_stop_file(tmp_path: Path) -> None:
    roster = make_roster(tmp_path, "--hang", keep=5)
    locks = LocalLocks(tmp_path / "locks")
    ensure_roster_profiles(roster, locks)
    ledger = mission_ledger(roster, locks)
    mission_id = submit(ledger, roster, "hang until cancelled")
    assignment_id = ledger.read().get(mission_id).current_assignment_id
    assert assignment_id is not None
    result: list[str] = []
    runner = threading.Thread(
        target=lambda: result.append(
            mission_runner(roster, "a", locks).run(mission_id, assignment_id).state
        )
    )
    runner.start()
    deadline = time.monotonic() + 20
    while (
        not read_beat(roster.runtime_dir, assignment_id).get("agentPid")
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    with ledger.edit() as doc:
        cancel_mission(doc, mission_id, "no longer needed")
    runner.join(timeout=20)
    assert result == ["cancelled"]
    assert ledger.read().get(mission_id).state is S.CANCELLED


def test_index_reads_backwards_across_block_boundaries(tmp_path: Path) -> None:
    from swarmq.missions.history import _backwards

    path = tmp_path / "index.jsonl"
    lines = [json.dumps({"id": f"m{n}", "pad": "x" * (n % 13)}) for n in range(200)]
    path.write_text("\n".join(lines) + "\n{torn")
    with path.open("rb") as handle:
        got = [line.decode() for line in _backwards(handle, block=7)]
    assert got == ["{torn", *reversed(lines)]
