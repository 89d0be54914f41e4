"""``swarmq consolidate``: dry-run table, JSON, a real run, a bad scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.consolidation.support import entry, write_store
from tests.support import write_roster

LESSONS = [
    "Run the database migrations in a transaction before deploying the api service to production",
    "Run the database migrations in a transaction before deploying the api service to production now",
    "Run the database migrations in a transaction before deploying the web service to production",
    "Run the database migrations in a transaction before deploying the web service to staging",
]


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    path = write_roster(tmp_path, swarm_name, redis_url, knowledge={"swarm_max_entries": None})
    write_store(
        tmp_path / "project",
        [
            entry(f"e{i}", lesson, created=f"2026-01-0{i + 1}T00:00:00.000Z")
            for i, lesson in enumerate(LESSONS)
        ],
    )
    return path


def test_dry_run_then_run(roster_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    store = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    before = store.read_bytes()
    shown = runner.invoke(
        app, ["-c", str(roster_file), "consolidate", "--dry-run", "--show", "5", "-q"]
    )
    assert shown.exit_code == 0, shown.output
    assert "dry run" in shown.output and "duplicate" in shown.output
    assert store.read_bytes() == before

    planned = runner.invoke(
        app, ["-c", str(roster_file), "consolidate", "--dry-run", "--json", "--scope", "swarm"]
    )
    assert planned.exit_code == 0, planned.output
    rows = json.loads(planned.output)
    assert rows[0]["scope"] == "swarm" and rows[0]["dry_run"] is True
    assert rows[0]["counts"]["duplicate"] >= 1 and rows[0]["actions"]

    done = runner.invoke(app, ["-c", str(roster_file), "consolidate", "--json", "-s", "swarm"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)[0]["changed"] > 0
    after = store.read_bytes()
    again = runner.invoke(app, ["-c", str(roster_file), "consolidate", "--json", "-s", "swarm"])
    assert json.loads(again.output)[0]["changed"] == 0
    assert store.read_bytes() == after


def test_unknown_scope(roster_file: Path) -> None:
    result = CliRunner().invoke(app, ["-c", str(roster_file), "consolidate", "--scope", "nope"])
    assert result.exit_code == 1
    assert "unknown consolidation scope 'nope'" in result.output


def test_nightly_then_full(roster_file: Path) -> None:
    runner = CliRunner()
    base = ["-c", str(roster_file), "consolidate", "--json", "-q", "-s", "swarm"]
    first = runner.invoke(app, base)
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)[0]["mode"] == "full"  # no watermark yet
    nightly = runner.invoke(app, base)
    assert nightly.exit_code == 0, nightly.output
    row = json.loads(nightly.output)[0]
    assert row["mode"] == "incremental" and row["focus"] == 0
    full = runner.invoke(app, [*base, "--full"])
    assert full.exit_code == 0, full.output
    assert json.loads(full.output)[0]["mode"] == "full"
