"""``swarmq knowledge recall --error`` and ``swarmq knowledge inject --session-start``, through the
CLI a hook runs: a matching failure prints the block, anything else prints nothing at all, and
the persisted signature index follows the store as it changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster

LESSON = (
    '`python -c "import yaml"` failed (bash: python: command not found); '
    '`python3 -c "import yaml"` worked instead.'
)


def test_recall_prints_the_matching_lesson_and_nothing_otherwise(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    miss = runner.invoke(
        app,
        [
            "-c",
            str(roster),
            "knowledge",
            "recall",
            "--error",
            "$ python x.py\nbash: python: command not found",
        ],
    )
    assert miss.exit_code == 0 and miss.stdout == ""  # empty store: silent
    added = runner.invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", LESSON, "--json"])
    assert added.exit_code == 0, added.output
    hit = runner.invoke(
        app,
        [
            "-c",
            str(roster),
            "knowledge",
            "recall",
            "--error",
            "$ python manage.py test\nzsh:1: command not found: python",
        ],
    )
    assert hit.exit_code == 0, hit.output
    assert hit.stdout.startswith("<swarm_knowledge_directives>") and "python3" in hit.stdout
    other = runner.invoke(
        app,
        [
            "-c",
            str(roster),
            "knowledge",
            "recall",
            "--error",
            "$ rg x\nzsh:1: command not found: rg",
        ],
    )
    assert other.exit_code == 0 and other.stdout == ""
    as_json = runner.invoke(
        app,
        [
            "-c", str(roster), "knowledge", "recall", "--json", "--session-id", "s1",
            "--error", "$ python -V\nbash: python: command not found",
        ],
    )  # fmt: skip
    data = json.loads(as_json.stdout)
    assert [s["lesson"] for s in data["shown"]] == [LESSON] and data["trace_id"]
    store = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    entry = json.loads(store.read_text().splitlines()[0])
    assert entry["failure_signature"] == "python: command not found"
    assert entry["retrieval_outcomes"]["shown_count"] == 2  # both recalls recorded


def test_recall_reads_an_old_store_and_follows_its_changes(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    """An entry written without the field (opencode-swarm, an older swarmq) is recalled from
    its text; a rewrite of the store (the entry quarantined) is seen by the next call."""
    roster = write_roster(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    added = runner.invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", LESSON, "--json"])
    entry_id = json.loads(added.stdout)["id"]
    store = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    entry = json.loads(store.read_text())
    del entry["failure_signature"]
    store.write_text(json.dumps(entry) + "\n")
    argv = ["-c", str(roster), "knowledge", "recall", "--preview", "--error"]
    failure = "$ python a.py\n/bin/sh: 1: python: not found"
    assert "python3" in runner.invoke(app, [*argv, failure]).stdout
    quarantined = runner.invoke(
        app, ["-c", str(roster), "knowledge", "quarantine", entry_id, "wrong"]
    )
    assert quarantined.exit_code == 0, quarantined.output
    assert runner.invoke(app, [*argv, failure]).stdout == ""


def test_session_start_prints_the_project_facts(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    start = ["-c", str(roster), "knowledge", "inject", "--session-start"]
    assert runner.invoke(app, start).stdout == ""
    for lesson in (
        "The shell here is zsh: quote paths with [id] or (group) in them",
        "Use the bravo cache layer when reading bravo tables in sql",
    ):
        assert (
            runner.invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", lesson]).exit_code
            == 0
        )
    shown = runner.invoke(app, start)
    assert shown.exit_code == 0, shown.output
    assert "zsh" in shown.stdout and "bravo" not in shown.stdout
    both = runner.invoke(app, [*start, "some task"])
    assert both.exit_code != 0


def test_recall_in_a_fresh_process(tmp_path: Path, swarm_name: str, redis_url: str) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    assert (
        CliRunner()
        .invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", LESSON])
        .exit_code
        == 0
    )
    done = subprocess.run(
        [sys.executable, "-m", "swarmq.cli", "-c", str(roster), "knowledge", "recall",
         "--error", "-"],
        input="$ python3 -V && python -V\nbash: python: command not found\n",
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "python3" in done.stdout
