"""File-level commands in an existing opencode-swarm / AgentOps project with no swarm.yaml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def swarmq(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "REDIS_URL")}
    env.update(
        PYTHONPATH=str(REPO),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
    )
    return subprocess.run(
        [sys.executable, "-m", "swarmq.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # 15-25 s of real processes: handed out first
def test_file_level_commands_run_without_a_roster(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "shop"
    (project / ".swarm").mkdir(parents=True)
    (project / ".agents").mkdir()
    inside = project / "src" / "billing"
    inside.mkdir(parents=True)

    added = swarmq(
        inside,
        home,
        "knowledge",
        "add",
        "--plain",
        "Always key invoice exports by invoice id so a redelivered task finds the first result.",
    )
    assert added.returncode == 0, added.stderr
    assert f"using the project at {project}" in added.stderr.replace("\n", "")
    assert "None" not in added.stdout
    listed = swarmq(inside, home, "knowledge", "list", "--json")
    assert listed.returncode == 0 and "key invoice exports by invoice id" in listed.stdout
    assert (project / ".swarm" / "knowledge.jsonl").exists()

    forged = swarmq(
        inside, home, "forge", str(FIXTURES / "markdown" / "session-notes.md"), "--json"
    )
    assert forged.returncode == 0, forged.stderr
    assert json.loads(forged.stdout)["results"][0]["new"] >= 1
    assert list((project / ".agents" / "knowledge" / "pending").glob("*.md"))
    for args in (
        ["flywheel", "close-loop", "--json"],
        ["pool", "list", "--json"],
        ["lookup", "invoice", "--json"],
        ["flywheel", "status", "--json"],
        ["consolidate", "--dry-run", "--json"],
        ["memory", "search", "invoice", "--json"],
    ):
        done = swarmq(inside, home, *args)
        assert done.returncode == 0, (args, done.stderr)
        json.loads(done.stdout)
    assert not (project / ".runtime").exists() and not (project / "swarm.yaml").exists()

    # Commands that run a swarm still need a roster, and say how to get one.
    refused = swarmq(inside, home, "status")
    assert refused.returncode == 1 and "swarmq demo" in refused.stderr.replace("\n", " ")
    outside = swarmq(tmp_path, home, "knowledge", "list")
    assert outside.returncode == 1 and "file not found" in outside.stderr
