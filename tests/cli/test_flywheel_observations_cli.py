"""`swarmq flywheel observations`: a person sees every probe observation the swarm may show, and
the damaged lines of the file, and forgets one without losing any other line, for good (a
forge of its transcript again does not bring it back). Real files, a real
forge of a transcript, real Redis store locks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.coord.cluster import Cluster
from swarmq.flywheel.probes import ABSENT, ProbeObservation, forgotten_ids
from swarmq.forge.extract import forge_transcript
from swarmq.roster.loader import load_roster
from swarmq.wiring.flywheel import layout_for
from tests.forge.test_probe_observations import VITE, codex_session
from tests.support import write_roster

LATER = "$ cat apps/web/vite.config.js\ncat: apps/web/vite.config.js: No such file or directory"
NOT_JSON = '{"session_id": "torn'
NOT_AN_OBSERVATION = '{"session_id": "s", "call": "cat x", "missing": ""}'


def invoke(roster: Path, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(app, ["-c", str(roster), *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args and code == 0 else result.output


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    """A project whose first session probed ``vite.config.js`` and found the ``.mjs`` (forged),
    plus an observation of an absent folder, a torn line and a line that is no observation."""
    roster_file = write_roster(tmp_path, swarm_name, redis_url)
    roster = load_roster(roster_file)
    (roster.workspace_dir / ".swarm").mkdir(parents=True, exist_ok=True)
    cluster = Cluster.connect(roster.cluster_config())
    transcript = codex_session(tmp_path / "rollout-first.jsonl", "sess-first", VITE)
    forge_transcript(transcript, layout_for(roster), cluster.locks, roster.forge)
    absent = ProbeObservation("sess-two", "ls docs/api", "docs/api", ABSENT, "ls docs")
    probes = layout_for(roster).probes
    with probes.open("a", encoding="utf-8") as handle:
        handle.write(f"{NOT_JSON}\n\n{NOT_AN_OBSERVATION}\n{json.dumps(absent.as_dict())}\n")
    return roster_file


def test_lists_each_observation_and_reports_damaged_lines(roster_file: Path) -> None:
    roster = load_roster(roster_file)
    listed = invoke(roster_file, "flywheel", "observations", "--json")
    assert listed["total"] == 2 and listed["file"] == str(layout_for(roster).probes)
    assert listed["project"] == str(roster.agents_dir.parent)
    rows = {r["missing"]: r for r in listed["observations"]}
    assert rows["vite.config.js"]["found"] == "apps/web/vite.config.mjs"
    assert rows["vite.config.js"]["session_id"] == "rollout-first"
    assert rows["docs/api"]["resolution"] == "absent"
    assert all(r["project"] == listed["project"] for r in listed["observations"])
    problems = listed["problems"]
    assert len(problems) == 2
    assert problems[0].startswith(f"{layout_for(roster).probes}:2: invalid JSON")
    assert problems[1].startswith(f"{layout_for(roster).probes}:4: not an observation")

    table = " ".join(invoke(roster_file, "flywheel", "observations").split())
    assert "probe observations of" in table and "apps/web/vite.config.mjs" in table
    assert "absent (ls docs)" in table and "rollout-first" in table
    assert ":2: invalid JSON" in table and ":4: not an observation" in table
    one = invoke(roster_file, "flywheel", "observations", "--limit", "1")
    assert "1 older one(s) not shown" in one

    status = invoke(roster_file, "flywheel", "status", "--json")
    assert status["probe_observations"] == 2
    assert any(":4: not an observation" in note for note in status["notes"])
    assert "probe observations" in invoke(roster_file, "flywheel", "status")


def test_forget_removes_one_and_keeps_every_other_line(roster_file: Path) -> None:
    probes = layout_for(load_roster(roster_file)).probes
    before = probes.read_bytes()
    missed = invoke(roster_file, "flywheel", "observations", "--forget", "nope.txt", code=1)
    flat = " ".join(missed.split())
    assert "'nope.txt'" in flat and str(probes) in flat and "nothing was forgotten" in flat
    assert probes.read_bytes() == before  # one name matching nothing: nothing is written
    both = invoke(
        roster_file, "flywheel", "observations", "--forget", "docs/api", "--forget", "x", code=1
    )
    assert "'x'" in both and "'docs/api'" not in both and probes.read_bytes() == before
    assert "give an observation id" in invoke(
        roster_file, "flywheel", "observations", "--forget", " ", code=1
    )

    shown = invoke(roster_file, "knowledge", "recall", "--error", LATER, "--preview", "--json")
    vite = next(
        r["id"]
        for r in invoke(roster_file, "flywheel", "observations", "--json")["observations"]
        if r["missing"] == "vite.config.js"
    )
    assert vite in json.dumps(shown)
    gone = invoke(roster_file, "flywheel", "observations", "--forget", vite, "--json")
    assert [o["id"] for o in gone["forgotten"]] == [vite] and gone["quarantined"] == 1
    lines = probes.read_text(encoding="utf-8").splitlines()
    kept = before.decode("utf-8").splitlines()
    assert lines == [x for x in kept if x and x != NOT_JSON and vite not in x]  # byte for byte
    quarantined = probes.with_name("probes.corrupt.jsonl").read_text(encoding="utf-8")
    assert json.loads(quarantined)["text"] == NOT_JSON and json.loads(quarantined)["line"] == 2
    after = invoke(roster_file, "knowledge", "recall", "--error", LATER, "--preview", "--json")
    assert vite not in json.dumps(after)  # what recall showed is silenced
    roster = load_roster(roster_file)
    locks = Cluster.connect(roster.cluster_config()).locks
    transcript = roster_file.parent / "rollout-first.jsonl"
    forge_transcript(transcript, layout_for(roster), locks, roster.forge, force=True)
    assert vite not in probes.read_text(encoding="utf-8")  # forged again: stays forgotten
    assert vite in forgotten_ids(layout_for(roster))

    by_path = invoke(roster_file, "flywheel", "observations", "--forget", "api")
    assert "forgot 1 observation(s)" in by_path and "docs/api" in by_path
    left = invoke(roster_file, "flywheel", "observations", "--json")
    assert left["total"] == 0 and len(left["problems"]) == 1  # the line that is no observation
    assert probes.read_text(encoding="utf-8") == NOT_AN_OBSERVATION + "\n"
    assert invoke(roster_file, "flywheel", "status", "--json")["probe_observations"] == 0
