"""`swarmq mission ...` and `swarmq roster init` in-process: clear errors, nothing written outside roots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swarmq.cli import app
from tests.api.hostile import HOSTILE_IDS

runner = CliRunner()


def run(config: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--config", str(config), *args])
    return result.exit_code, result.output + (
        result.stderr if result.stderr_bytes is not None else ""
    )


def test_roster_init_keeps_human_edits(roster_file: Path, tmp_path: Path) -> None:
    code, out = run(roster_file, "roster", "init", "--json")
    assert code == 0, out
    assert json.loads(out)["workers"]["w1"] == {
        "MEMORY.md": "created",
        "IDENTITY.md": "created",
        "SOUL.md": "created",
    }
    memory = tmp_path / "profiles" / "w1" / "memory"
    (memory / "MEMORY.md").write_text("# Memory — w1\n\nmy own notes\n")
    code, out = run(roster_file, "roster", "init", "--json")
    assert json.loads(out)["workers"]["w1"]["MEMORY.md"] == "kept"
    assert "my own notes" in (memory / "MEMORY.md").read_text()
    assert (tmp_path / "profiles" / "w1" / "runtime.json").exists()


@pytest.mark.parametrize("bad", [b for b in HOSTILE_IDS if "\x00" not in b])
def test_hostile_ids_fail_cleanly(roster_file: Path, tmp_path: Path, bad: str) -> None:
    for args in (
        ("mission", "show", bad),
        ("mission", "submit", "x", "--worker", bad),
        ("mission", "list", "--worker", bad),
        ("mission", "cancel", bad),
        ("mission", "resume", bad),
        ("mission", "submit", "x", "--worker", "w1", "--key", bad + "/.."),
    ):
        code, out = run(roster_file, *args)
        assert code == 1, (args, out)
        assert "error:" in out and "Traceback" not in out, out
    assert {p.name for p in tmp_path.iterdir()} <= {
        "profiles",
        "project",
        "runtime",
        "shared",
        "swarm.yaml",
    }


def test_list_and_show_json(roster_file: Path) -> None:
    code, out = run(roster_file, "mission", "submit", "do it", "--worker", "ghost", "--json")
    assert code == 1 and "unknown worker 'ghost'" in out and "nothing was submitted" in out
    code, out = run(roster_file, "mission", "list", "--json")
    assert code == 0 and json.loads(out) == []  # a typo writes no failed mission
    code, out = run(roster_file, "mission", "submit", "do it", "--worker", "w1", "--json")
    mission = json.loads(out)
    code, out = run(roster_file, "mission", "list", "--json")
    assert code == 0 and json.loads(out)[0]["id"] == mission["id"]
    code, out = run(roster_file, "mission", "show", mission["id"])
    assert code == 0 and mission["id"] in out
