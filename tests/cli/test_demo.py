"""``swarmq demo`` run for real: embedded Redis, two workers, the example agent, the whole loop."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import libtmux
import pytest
import yaml

from swarmq.demo import example_agent
from swarmq.roster.loader import load_report
from swarmq.storage.procs import pid_alive
from tests.support import REPO

pytestmark = pytest.mark.slow


def run_demo(directory: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG",)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env["REDIS_URL"] = "redis://127.0.0.1:1/0"  # must be ignored: the demo brings its own Redis
    return subprocess.run(
        [sys.executable, "-m", "swarmq.cli", "demo", "--dir", str(directory), "--json", *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_demo_closes_the_loop_and_stops_what_it_started(tmp_path: Path) -> None:
    workspace = tmp_path / "demo"
    done = run_demo(workspace)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)

    assert [m["state"] for m in report["missions"]] == ["complete"] * 4
    assert {m["worker"] for m in report["missions"]} == {"ada", "grace"}
    assert len(report["forged"]) >= 3 and any("idempotent" in t for t in report["forged"])
    assert report["promoted"] and report["published"]
    # The last mission's prompt carried a promoted lesson, and the agent acknowledged it.
    assert report["injected"] and set(report["injected"]) <= set(report["published"])
    assert report["acknowledged"] == report["injected"]
    prompt = Path(report["files"]["injected prompt"]).read_text("utf-8")
    assert all(entry in prompt for entry in report["injected"])
    assert (
        report["flywheel_after"]["total_artifacts"]
        > report["flywheel_before"]["total_artifacts"]
        == 0
    )
    assert report["flywheel_after"]["citations_this_period"] > 0

    # The story: every lesson whole, with what became of it and why.
    lessons = report["lessons"]
    assert len(lessons) == len(report["forged"])
    idempotent = next(x for x in lessons if "idempotent" in x["lesson"])
    assert idempotent["lesson"].endswith("runs a second time.")  # whole, not cut to a title
    assert idempotent["fate"] == "promoted" and "KNOWLEDGE_APPLIED" in idempotent["why"]
    assert idempotent["injected_into"] and idempotent["acknowledged"]
    assert all(x["fate"] == "held" and "24 h" in x["why"] for x in lessons if x is not idempotent)

    # Its own roster validates with no warning and holds no YAML anchors.
    roster_text = Path(report["config"]).read_text("utf-8")
    assert "&id" not in roster_text and "*id" not in roster_text
    assert load_report(Path(report["config"])).problems == []

    # Everything it started is stopped: workers, beat, embedded Redis, tmux sessions.
    assert report["stopped"] is True
    config = yaml.safe_load(Path(report["config"]).read_text("utf-8"))
    runtime = Path(config["paths"]["runtime"])
    redis_pid = (
        int((runtime / "redis" / "redis.pid").read_text())
        if (runtime / "redis" / "redis.pid").exists()
        else None
    )
    assert redis_pid is None or not pid_alive(redis_pid)
    if report["attach"]:
        server = libtmux.Server(socket_name=f"swarmq-{config['swarm']}")
        assert not [s for s in server.sessions if s.name and s.name.startswith("swarm")]
    assert (runtime / "hosts").is_dir() and not list((runtime / "hosts").glob("*/pids/*.pid"))


def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    done = run_demo(tmp_path)
    assert done.returncode == 1
    assert "not empty" in done.stderr and (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "swarm.yaml").exists()


@pytest.mark.parametrize(
    ("objective", "expected"),
    [
        ("Customers got duplicate invoices after a crash", "idempotent"),
        ("The invoice total test is flaky", "integer cents"),
        ("Write the release notes", None),
    ],
)
def test_example_agent_follows_the_contract(
    tmp_path: Path, objective: str, expected: str | None
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(
        f"# Mission m-1 — t\n\n## Objective\n{objective}\n\n## Knowledge directives\n\n"
        "<swarm_knowledge_directives>\ntrace_id: tr-1\nack: …\n- id: e-1\n  confidence: 0.90\n"
        "  priority: high\n  lesson: key exports by invoice id\n</swarm_knowledge_directives>\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "SWARMQ_CONFIG": str(tmp_path / "missing.yaml")}
    done = subprocess.run(
        [sys.executable, example_agent.__file__, str(prompt)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert "KNOWLEDGE_APPLIED:tr-1:e-1 reason=followed it in this change" in lines
    assert lines[-1] == "STATE: DONE" and "BEGIN HANDOFF" in lines
    if expected:
        assert expected in done.stdout
    failed = subprocess.run(
        [sys.executable, example_agent.__file__, str(prompt)],
        capture_output=True,
        text=True,
        env={**env, "EXAMPLE_AGENT_EXIT": "3"},
        timeout=60,
        check=False,
    )
    assert failed.returncode == 3 and "STATE: DONE" not in failed.stdout


def test_demo_keep_then_a_readme_mission_completes(tmp_path: Path) -> None:
    workspace = tmp_path / "kept"
    done = run_demo(workspace, "--keep")
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    if done.returncode != 0:  # --keep left whatever it started running: stop it, then fail
        env.update(SWARMQ_CONFIG=str(workspace / "swarm.yaml"), PYTHONPATH=str(REPO))
        subprocess.run(
            [sys.executable, "-m", "swarmq.cli", "down", "--timeout", "20"],
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    env.update(SWARMQ_CONFIG=report["config"], PYTHONPATH=str(REPO))

    def swarmq(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "swarmq.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    try:
        assert report["stopped"] is False
        submitted = swarmq(
            "mission",
            "submit",
            "Make the invoice export safe when a worker crashes",  # the README's mission
            "--worker",
            "ada",
            "--json",
        )
        assert submitted.returncode == 0, submitted.stderr
        mission_id = json.loads(submitted.stdout)["id"]
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline and state != "complete":
            state = json.loads(swarmq("mission", "show", mission_id, "--json").stdout)["state"]
            time.sleep(0.3)
        assert state == "complete"
        shown = swarmq("mission", "show", mission_id)
        times = re.findall(r"^│ (\d{4}-\d\d-\d\dT[\d:.]+Z)", shown.stdout, re.M)
        assert len(times) >= 4 and times == sorted(times)  # ledger and worker events, one timeline
        assert "ledger:" in shown.stdout and "checkpoint" in shown.stdout
        # As the README says: the promoted lesson is in the new mission's prompt, and applied.
        workspace_dir = Path(report["workspace"])
        prompt = next(workspace_dir.glob(f"profiles/ada/memory/missions/{mission_id}/prompt-*.txt"))
        assert "idempotent" in prompt.read_text("utf-8")
        assert "applying directive" in shown.stdout
    finally:
        down = swarmq("down", "--timeout", "20")
    assert down.returncode == 0 and "stopped" in down.stdout
