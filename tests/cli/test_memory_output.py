"""`swarmq memory search` output: the whole path:line of every hit and a clean snippet."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster

runner = CliRunner()


def test_search_output_names_the_whole_path_and_cleans_jsonl(tmp_path: Path) -> None:
    config = write_roster(tmp_path, "memcli", "redis://127.0.0.1:6379/15")
    deep = (
        tmp_path
        / "profiles"
        / "a-worker-with-a-long-id"
        / "memory"
        / "missions"
        / "mission-8309abcdef012345"
    )
    deep.mkdir(parents=True)
    event = {
        "eventId": "e-1",
        "type": "checkpoint",
        "summary": "renewed the   watchdog lease",
        "at": "2026-01-01T00:00:00Z",
    }
    (deep / "events.jsonl").write_text(
        json.dumps({"type": "dispatch", "summary": "go"}) + "\n" + json.dumps(event) + "\n"
    )
    (deep / "SUMMARY.md").write_text("# S\n\n<!-- evt:e-1 --> the watchdog lease is renewed\n")

    done = runner.invoke(app, ["--config", str(config), "memory", "search", "watchdog lease"])
    assert done.exit_code == 0, done.output
    text = done.output
    assert f"{deep / 'events.jsonl'}:2" in text and f"{deep / 'SUMMARY.md'}:3" in text
    assert "▶    2 │ [checkpoint] renewed the watchdog lease" in text
    assert '"eventId"' not in text and "<!--" not in text
    assert "▶    3 │  the watchdog lease is renewed" in text
