"""One huge entry (5 MB lesson, written by another tool) does not make tables huge or slow."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster


def one_entry_store(tmp_path: Path, swarm_name: str, redis_url: str) -> tuple[Path, Path]:
    """A roster and its swarm knowledge file holding one entry added through the CLI."""
    roster = write_roster(tmp_path, swarm_name, redis_url)
    added = CliRunner().invoke(
        app,
        [
            "-c",
            str(roster),
            "knowledge",
            "add",
            "--plain",
            "Run the python test suite before pushing to main",
            "--json",
        ],
    )
    assert added.exit_code == 0, added.output
    return roster, tmp_path / "project" / ".swarm" / "knowledge.jsonl"


def test_a_five_megabyte_entry_is_clipped_in_tables_and_whole_in_json(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    roster, path = one_entry_store(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    entry = json.loads(path.read_text())
    entry["lesson"] = "Run the python test suite " + "x" * 5_000_000
    path.write_text(json.dumps(entry) + "\n")

    started = time.monotonic()
    listed = runner.invoke(app, ["-c", str(roster), "knowledge", "list"])
    elapsed = time.monotonic() - started
    assert listed.exit_code == 0, listed.output[-2000:]
    assert len(listed.output) < 20_000 and "+4,999,626 chars" in listed.output.replace("\n", "")
    assert elapsed < 10  # was 39 s and 28 MB of output
    whole = runner.invoke(app, ["-c", str(roster), "knowledge", "list", "--json"])
    assert len(json.loads(whole.stdout)["entries"][0]["lesson"]) == len(entry["lesson"])


def test_the_table_shows_the_last_fifty_and_says_how_many_match(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    """A table longer than a screen is not read and costs ~1 ms a row to render: the default
    shows the last 50, says on stderr how many match, and ``--limit 0`` shows them all."""
    roster, path = one_entry_store(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    first = json.loads(path.read_text())
    lines = [
        json.dumps({**first, "id": f"{first['id']}-{i:03d}", "lesson": f"lesson number {i:03d}"})
        for i in range(60)
    ]
    path.write_text("\n".join(lines) + "\n")

    table = runner.invoke(app, ["-c", str(roster), "knowledge", "list"])
    assert table.exit_code == 0, table.output
    assert "lesson number 059" in table.stdout and "lesson number 010" in table.stdout
    assert "lesson number 009" not in table.stdout
    assert "the last 50 of 60 matches" in table.stderr
    listed = json.loads(
        runner.invoke(app, ["-c", str(roster), "knowledge", "list", "--json"]).stdout
    )
    assert (len(listed["entries"]), listed["matched"]) == (50, 60)
    every = runner.invoke(app, ["-c", str(roster), "knowledge", "list", "--limit", "0"])
    assert "lesson number 000" in every.stdout and "matches" not in every.stderr
    negative = runner.invoke(app, ["-c", str(roster), "knowledge", "list", "--limit", "-5"])
    assert negative.exit_code == 2 and "--limit" in negative.output
