"""Missions forge the agent's own session, through real Celery workers on real Redis.

The README's Claude Code agent line runs the stand-in ``claude`` (``tests/agents/``), which
replays a real recorded Claude Code session (``eval/forge/sessions/cc-edmb-claude-sync.jsonl``,
source in eval/forge/SOURCES.md) containing a failing tool call and what fixed it:
``verify-sync.ps1 -Detailed`` fails to parse, the agent edits the script, and the script then
runs. Through the agent's own session forge finds that fix (the edit of the script the failed
command names); through stdout alone (the final answer, which is all ``claude -p`` prints: the
path before issue 30) it does not.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.missions.agentcli import claude_project_key
from swarmq.profiles.events import read_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.loader import load_roster
from tests.support import WorkerProcess, write_roster
from tests.test_loop import wait_for as _wait_for

REPO = Path(__file__).resolve().parents[2]
AGENTS = REPO / "tests" / "agents"
SESSIONS = REPO / "eval" / "forge" / "sessions"


def readme_agent(program: str) -> list[str]:
    """The agent command the README's agent examples give for ``program``."""
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith(f'agent: {{command: ["{program}"'):
            command = yaml.safe_load(line)["agent"]["command"]
            assert isinstance(command, list)
            return [str(a) for a in command]
    raise AssertionError(f"README.md has no agent example for {program}")


README_CLAUDE = readme_agent("claude")
README_CODEX = [*readme_agent("codex")[:-1], "--json", "{prompt}"]
FIX = "verify-sync.ps1"
CODEX_FIX = "cannot lock ref"


def wait_for(predicate: Callable[[], Any], what: str) -> Any:
    """Missions and forge through real workers on a shared 2-core machine: generous time."""
    return _wait_for(predicate, timeout=240, what=what)


def agent(command: list[str], home: Path, replay: str, **extra: Any) -> dict[str, Any]:
    return {
        "command": command,
        "timeout_seconds": 120,
        "env": {
            "HOME": str(home),
            "PATH": f"{AGENTS}{os.pathsep}{os.environ['PATH']}",
            "STANDIN_REPLAY": str(SESSIONS / replay),
        },
        **extra,
    }


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    home = tmp_path / "home"
    workers = [
        {  # the README's line, every default
            "id": "w1",
            "role": "builder",
            "queues": ["missions", "forge"],
            "agent": agent(README_CLAUDE, home, "cc-edmb-claude-sync.jsonl"),
        },
        {  # the same agent, forging stdout only: the path before agent sessions were read
            "id": "w2",
            "role": "builder",
            "queues": ["missions"],
            "agent": agent(README_CLAUDE, home, "cc-edmb-claude-sync.jsonl", transcript="stdout"),
        },
        {  # Codex with its JSON events
            "id": "w3",
            "role": "builder",
            "queues": ["missions"],
            "agent": agent(README_CODEX, home, "cx-qna-speckit-specify.jsonl"),
        },
        {  # a session Claude Code is told not to write: forged from stdout, and said why
            "id": "w4",
            "role": "builder",
            "queues": ["missions"],
            "agent": agent(
                [*README_CLAUDE, "--no-session-persistence"], home, "cc-edmb-claude-sync.jsonl"
            ),
        },
    ]
    config = write_roster(tmp_path, swarm_name, redis_url, workers=workers)
    (tmp_path / "project" / ".swarm").mkdir(parents=True)
    return config


def forged(roster: Any, key: str) -> dict[str, Any] | None:
    ledger = roster.agents_dir / "ao" / "forge" / "ledger.jsonl"
    if not ledger.exists():
        return None
    for line in ledger.read_text().splitlines():
        record = json.loads(line)
        if record.get("key") == key:
            return dict(record)
    return None


def pending_text(roster: Any) -> str:
    pending = roster.agents_dir / "knowledge" / "pending"
    return "\n".join(p.read_text() for p in sorted(pending.glob("*.md")))


def test_mission_forges_the_agents_own_session(roster_file: Path, celery_client: Any) -> None:
    roster = load_roster(roster_file, env={})
    cluster = Cluster.connect(roster.cluster_config())
    client = MissionClient(roster, celery=celery_client, locks=cluster.locks)
    workers = [WorkerProcess(roster_file, w).start(celery_client) for w in ("w1", "w2")]
    try:

        def run(worker: str, key: str) -> tuple[str, str]:
            mission = client.submit(
                "Make verify-sync pass on the work computer", worker=worker, client_key=key
            )
            done = wait_for(
                lambda: (
                    client.get(mission.id).state.value in ("complete", "failed")
                    and client.get(mission.id)
                ),
                what=f"the mission on {worker} to settle",
            )
            assert done.state.value == "complete", done.assignments[-1].reason
            return mission.id, done.assignments[-1].id

        # The old path first (forge writes a candidate once, whoever finds it first).
        _, old = run("w2", "old-path")
        record = wait_for(lambda: forged(roster, old), what="forge of the stdout log")
        assert record["transcript"].endswith(f"transcript-{old}.log")
        assert FIX not in pending_text(roster)

        mission_id, new = run("w1", "agent-session")
        record = wait_for(lambda: forged(roster, new), what="forge of the agent's session")
        assert record["transcript"].endswith(f"session-{new}.ndjson")
        text = pending_text(roster)
        assert FIX in text and "after Edit wrote" in text  # the error and the edit that fixed it
        block = next(b for b in text.split("# Learning:") if FIX in b)
        assert f"session-{new}.ndjson" in block and "**Extractor**: sequence" in block

        # The stdout log stays (markers, the pane); the session is kept beside it.
        layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "w1")
        mission_dir = layout.mission_dir(mission_id)
        assert (mission_dir / f"transcript-{new}.log").read_text().count("PowerShell") >= 1
        copied = mission_dir / f"session-{new}.ndjson"
        session_id = next(
            json.loads(line)["sessionId"]
            for line in copied.read_text().splitlines()
            if "sessionId" in json.loads(line)
        )
        projects = roster_file.parent / "home" / ".claude" / "projects"
        [original] = projects.glob(f"*/{session_id}.jsonl")  # w2's session is there too
        assert original.parent.name == claude_project_key(str(roster.workspace_dir))
        assert copied.read_bytes() == original.read_bytes()
        assert client.get(mission_id).assignments[-1].session == str(copied)
        notes = [e for e in read_events(layout, mission_id) if "agent session" in e["summary"]]
        assert len(notes) == 1 and original.name in notes[0]["summary"]
    finally:
        for worker in workers:
            worker.stop()


def test_codex_and_a_missing_session(roster_file: Path, celery_client: Any) -> None:
    roster = load_roster(roster_file, env={})
    cluster = Cluster.connect(roster.cluster_config())
    client = MissionClient(roster, celery=celery_client, locks=cluster.locks)
    workers = [WorkerProcess(roster_file, w).start(celery_client) for w in ("w1", "w3", "w4")]
    try:
        codex = client.submit("Create the feature branch", worker="w3")
        lost = client.submit("Make verify-sync pass", worker="w4")
        for mission in (codex, lost):
            wait_for(
                lambda m=mission: client.get(m.id).state.value == "complete",
                what=f"mission {mission.id}",
            )
        codex_run = client.get(codex.id).assignments[-1].id
        record = wait_for(lambda: forged(roster, codex_run), what="forge of the Codex rollout")
        assert record["transcript"].endswith(f"session-{codex_run}.ndjson")
        assert CODEX_FIX in pending_text(roster)

        lost_run = client.get(lost.id).assignments[-1].id
        record = wait_for(lambda: forged(roster, lost_run), what="forge of the stdout log")
        assert record["transcript"].endswith(f"transcript-{lost_run}.log")
        layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "w4")
        notes = [
            e["summary"] for e in read_events(layout, lost.id) if "agent session" in e["summary"]
        ]
        assert notes == [
            "agent session not found, forging the stdout log instead: the command turns "
            "persistence off (--no-session-persistence)"
        ]
    finally:
        for worker in workers:
            worker.stop()
