"""`swarmq roster validate|show|compose` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import REPO

runner = CliRunner()


def test_validate_example_roster() -> None:
    done = runner.invoke(app, ["roster", "validate", str(REPO / "swarm.yaml"), "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["valid"] and [w["id"] for w in data["workers"]] == ["swarm1", "swarm2"]


def test_validate_reports_every_error_and_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "swarm.yaml"
    bad.write_text("swarm: s\nworkers:\n  - id: a/b\n    role: x\n    queus: []\n")
    done = runner.invoke(app, ["roster", "validate", str(bad)])
    assert done.exit_code == 1
    assert "workers[0](a/b).id" in done.output and "did you mean 'queues'?" in done.output


def test_a_scheduled_task_nobody_registers_is_an_error(tmp_path: Path) -> None:
    text = (REPO / "swarm.yaml").read_text().replace("task: maturity.sweep", "task: maturity.swep")
    bad = tmp_path / "swarm.yaml"
    bad.write_text(text)
    done = runner.invoke(app, ["roster", "validate", str(bad)])
    assert done.exit_code == 1
    assert (
        "no task named 'maturity.swep' is registered; did you mean 'maturity.sweep'" in done.output
    )
    refused = runner.invoke(app, ["--config", str(bad), "up"])
    assert refused.exit_code == 1 and "nothing was started" in refused.output


def test_show_json_has_resolved_paths() -> None:
    done = runner.invoke(app, ["--config", str(REPO / "swarm.yaml"), "roster", "show", "--json"])
    assert done.exit_code == 0
    data = json.loads(done.output)
    assert Path(data["paths"]["runtime"]).is_absolute() and Path(data["workspace"]).is_absolute()
    assert data["broker_url"] == data["redis_url"]
    assert data["workers"][0]["all_queues"][0] == "worker.swarm1"


def test_agent_commands_are_checked_and_the_fix_is_named(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho STATE: DONE\n")  # not executable yet
    roster = tmp_path / "swarm.yaml"
    roster.write_text(
        "swarm: s\nworkspace: .\nworkers:\n"
        "  - {id: a, role: x, queues: [missions], agent: {command: [no-such-agent-cli, -p, '{prompt}']}}\n"
        "  - {id: b, role: x, queues: [missions], agent: {command: [./agent.sh, '{prompt_file}']}}\n"
        "  - {id: c, role: x, queues: [missions]}\n"
        "  - {id: d, role: x, queues: [forge], agent: {command: [python3, x.py]}}\n"
        "  - {id: e, role: x, queues: [forge], agent: {command: [sh, c.sh], transcript: codex}}\n"
        "  - {id: f, role: x, queues: [forge], agent: {command: [sh, -c, claude -p x]}}\n"
        "  - {id: g, role: x, queues: [forge], agent: {command: [claude, -p, x, "
        "--no-session-persistence]}}\n"
    )
    done = runner.invoke(app, ["roster", "validate", str(roster), "--json"])
    assert done.exit_code == 0, done.output
    problems = {p["path"]: p["message"] for p in json.loads(done.output)["problems"]}
    assert "not recognised as that CLI (codex exec)" in problems["workers[4](e).agent.transcript"]
    assert not any(p.startswith("workers[5]") for p in problems)
    assert "forge gets its stdout only" in problems["workers[6](g).agent.transcript"]
    missing = problems["workers[0](a).agent.command[0]"]
    assert "'no-such-agent-cli' is not on this machine's PATH" in missing
    assert "every mission sent to 'a' would fail" in missing and "The agent contract" in missing
    assert "chmod +x" in problems["workers[1](b).agent.command[0]"]
    assert "has no agent" in problems["workers[2](c).agent"]
    assert not [p for p in problems if p.startswith("workers[3]")]
    script.chmod(0o755)
    again = json.loads(runner.invoke(app, ["roster", "validate", str(roster), "--json"]).output)
    assert not [p for p in again["problems"] if p["path"].startswith("workers[1]")]


def test_piped_tables_never_cut_ids_or_paths(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    long_id = "w" + "x" * 63
    agent = str(tmp_path / ("a-very-long-directory-name-" * 4) / "agent.py")
    roster = tmp_path / "swarm.yaml"
    roster.write_text(
        f"swarm: s\nworkers:\n  - {{id: {long_id}, role: builder, queues: [missions, forge],"
        f" agent: {{command: [python3, '{agent}', '{{prompt_file}}']}}}}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "60"}
    done = subprocess.run(
        [sys.executable, "-m", "swarmq.cli", "roster", "validate", str(roster)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(long_id in line and agent in line for line in lines), done.stdout
    assert "…" not in done.stdout
