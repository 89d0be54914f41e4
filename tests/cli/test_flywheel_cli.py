"""`swarmq forge|pool|lookup|flywheel` in-process against the real Redis store locks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.flywheel.store import AgentsLayout
from tests.support import write_roster

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude-code" / "session-v2.0.jsonl"


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    """The fixture transcript narrates lessons no failed call witnesses: these tests follow them
    through the pool, so forge keeps them (``forge.narration_needs_witness`` and
    ``forge.narration_needs_limit`` off: they state no limit of the machine either)."""
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        forge={"narration_needs_witness": False, "narration_needs_limit": False},
    )


def run(config: Path, *args: str, code: int = 0) -> Any:
    result = runner.invoke(app, ["--config", str(config), *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args and code == 0 else result.output


def test_forge_pool_lookup_flywheel(roster_file: Path, tmp_path: Path) -> None:
    layout = AgentsLayout(tmp_path / "project" / ".agents")
    (tmp_path / "project" / ".swarm").mkdir()
    forged = run(
        roster_file, "forge", str(CLAUDE), str(FIXTURES / "markdown" / "session-notes.md"), "--json"
    )
    assert [r["new"] for r in forged["results"]] == [6, 3] and forged["failures"] == []
    table = run(roster_file, "forge", str(CLAUDE))
    assert "unchanged" in table
    run(roster_file, "forge", str(tmp_path / "nope.jsonl"), code=1)
    walked = run(roster_file, "forge", str(FIXTURES / "codex"), "--json")
    assert [Path(r["transcript"]).name for r in walked["results"]] == [
        "history.jsonl",
        "rollout-2026-03-04T08-00-00-019c9e21-4b7a-7d10-8c3e-5f1a2b3c4d5e.jsonl",
        "rollout-legacy-2025-08-21.jsonl",
    ]
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"level": "info"}\n')
    assert "none of the first 1 records" in run(roster_file, "forge", str(foreign), code=1)

    closed = run(roster_file, "flywheel", "close-loop", "--json")
    assert closed["ingest"]["added"] == 13
    listing = run(roster_file, "pool", "list", "--json")
    assert listing["total"] == 13 and all(not e["eligible"] for e in listing["entries"])
    silver = run(roster_file, "pool", "list", "--tier", "silver", "--json")
    assert 0 < silver["total"] < 13 and all(e["tier"] == "silver" for e in silver["entries"])
    assert "candidate(s))" in run(roster_file, "pool", "list")

    found = run(
        roster_file, "lookup", "visibility timeout redelivered", "--session", "s9", "--json"
    )
    assert found["cited"] == len(found["results"]) >= 1 and found["session_id"] == "s9"
    # The first hit may be a knowledge entry the close loop published from a candidate that
    # holds too few of the query's words itself (a pool candidate is not reached by meaning).
    target = next(r["id"] for r in found["results"] if r["store"] == "candidate")
    shown = run(roster_file, "pool", "show", target, "--json")
    assert shown["candidate"]["id"] == target and shown["status"] == "pending"
    assert "held by the promotion gate" in run(roster_file, "pool", "promote", target, code=1)
    promoted = run(roster_file, "pool", "promote", target, "--force", "--json")
    assert Path(promoted["artifact_path"]).exists() and not promoted["deduplicated"]
    # "confirmed": the first hit may be a candidate the close loop already published as a
    # provisional entry (lookup ranks by meaning too, and a fact in two stores leads).
    assert promoted["knowledge"]["outcome"] in ("added", "reinforced", "duplicate", "confirmed")

    other = next(e["id"] for e in listing["entries"] if e["id"] != target)
    rejected = run(roster_file, "pool", "reject", other, "--reason", "not durable", "--json")
    assert rejected["status"] == "rejected" and Path(rejected["path"]).parent.name == "rejected"
    assert "already rejected" in run(
        roster_file, "pool", "reject", other, "--reason", "again", code=1
    )
    assert "no candidate" in run(roster_file, "pool", "show", "missing-id", code=1)
    # an AgentOps-only project (no .swarm/) gets no knowledge store behind its back
    (tmp_path / "project" / ".swarm").rename(tmp_path / "project" / ".swarm-away")
    third = next(e["id"] for e in listing["entries"] if e["id"] not in (target, other))
    bare = run(roster_file, "pool", "promote", third, "--force", "--json")
    assert "knowledge" not in bare and not (tmp_path / "project" / ".swarm").exists()

    plot = tmp_path / "trend.png"
    status = run(roster_file, "flywheel", "status", "--json", "--plot", str(plot))
    assert (
        status["status"] in ("COMPOUNDING", "NEAR ESCAPE", "DECAYING")
        and "golden_signals" in status
    )
    assert status["plot"]["points"] >= 1 and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = run(roster_file, "flywheel", "status")
    assert "retrieval coverage" in text and "Gini" in text
    assert "--plot writes a PNG" in run(
        roster_file, "flywheel", "status", "--plot", str(tmp_path / "x.svg"), code=1
    )
    assert layout.citations.exists()


def test_status_says_what_is_missing_and_the_plot_says_no_data(
    roster_file: Path, tmp_path: Path
) -> None:
    empty = run(roster_file, "flywheel", "status", "--json", "--plot", str(tmp_path / "empty.png"))
    assert empty["status"] == "NO DATA" and empty["plot"]["points"] == 0
    assert any("No close loop has run yet" in n for n in empty["notes"])
    assert any("Nothing to measure yet" in n for n in empty["notes"])
    assert (tmp_path / "empty.png").read_bytes()[:4] == b"\x89PNG"

    assert "swarmq flywheel close-loop" in run(roster_file, "forge", str(CLAUDE))
    forged = run(roster_file, "flywheel", "status", "--json")
    assert any("forged file(s) wait in" in n for n in forged["notes"])
    assert "forged file(s) wait in" in run(roster_file, "flywheel", "status")

    run(roster_file, "flywheel", "close-loop", "--json")
    closed = run(roster_file, "flywheel", "status", "--json", "--plot", str(tmp_path / "one.png"))
    assert not any("No close loop" in n for n in closed["notes"])
    assert any("wait in the pool for the promotion gates" in n for n in closed["notes"])
    assert closed["status"] == "NO DATA" and closed["plot"]["points"] == 0


def test_forge_sessions_reads_the_transcripts_agentops_recorded(
    roster_file: Path, tmp_path: Path
) -> None:
    layout = AgentsLayout(tmp_path / "project" / ".agents")
    run(roster_file, "forge", code=1)  # nothing named, no --sessions
    assert "no transcripts" in run(
        roster_file, "forge", "--sessions", code=1
    )  # no session files yet
    (layout.ao / "index").mkdir(parents=True)
    (layout.ao / "index" / "sessions.jsonl").write_text(
        json.dumps({"session_id": "s1", "transcript_path": str(CLAUDE)})
        + "\n"
        + json.dumps({"session_id": "s2", "transcript_path": str(tmp_path / "gone.jsonl")})
        + "\n",
        encoding="utf-8",
    )
    forged = run(roster_file, "forge", "--sessions", "--json")
    assert [r["transcript"] for r in forged["results"]] == [str(CLAUDE.resolve())]
    assert forged["results"][0]["new"] == 6
    both = run(roster_file, "forge", str(CLAUDE), "--sessions", "--json")  # named twice, read once
    assert [r["status"] for r in both["results"]] == ["unchanged"]
