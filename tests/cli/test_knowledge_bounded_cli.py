"""One huge entry (5 MB lesson, written by another tool) does not make tables huge or slow."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster


def test_a_five_megabyte_entry_is_clipped_in_tables_and_whole_in_json(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    added = runner.invoke(app, ["-c", str(roster), "knowledge", "add",
                                "Run the python test suite before pushing to main", "--json"])
    assert added.exit_code == 0, added.output
    path = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
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
