"""Two real sessions of one project replayed in order through a stand-in that runs the installed
hooks exactly as Claude Code does, with a real worker and nobody running forge by hand.

The sessions are KaceyBui's (eval/forge/SOURCES.md), both in ``Meup-claude``: building a GA4 MCP
server (10:12, fifteen failing tool calls: ``npm`` not on PATH, ``sudo`` without a terminal, zsh
globs) and, 38 minutes later, a GA4 report (``/GA4 ...``).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from swarmq.knowledge.files import RECEIPTS_FILE
from swarmq.roster.loader import load_roster
from swarmq.storage.jsonl import read_jsonl
from tests.hooks.standin import hook_env, replay, run_hooks
from tests.hooks.support import (
    SESSIONS,
    forged_lessons,
    forged_to,
    stop_hook_server,
    swarmq,
    wait_until,
)

FIRST = SESSIONS / "cc-kacey-ga4-mcp-server.jsonl"
SECOND = SESSIONS / "cc-kacey-ga4-report.jsonl"
FORGED_WITHIN = 90.0


@pytest.fixture
def state(tmp_path: Path, roster_file: Path) -> Iterator[Path]:
    root = tmp_path / "state"
    yield root
    stop_hook_server(roster_file, root)


def test_two_real_sessions_feed_and_read_the_swarm(
    tmp_path: Path,
    roster_file: Path,
    state: Path,
    start_worker: Callable[..., Any],
) -> None:
    roster = load_roster(roster_file, env={})
    project = roster.workspace_dir
    env = hook_env(state)
    start_worker("w1", env={"SWARMQ_STATE": str(state)})
    installed = swarmq(
        "hooks", "install", "--agent", "claude-code", "--dir", str(project), cwd=project, env=env
    )
    assert installed.returncode == 0, installed.stderr

    first = replay(FIRST, project=project, claude_home=tmp_path / "claude", env=env)
    assert first.runs and all(run.exit_code == 0 for run in first.runs), [
        (r.event, r.exit_code, r.stderr[-300:]) for r in first.runs if r.exit_code
    ]
    events = [run.event for run in first.runs]
    assert events[0] == "SessionStart" and events[-1] == "SessionEnd"
    assert events.count("PostToolUseFailure") == 15
    assert max(run.seconds for run in first.runs) < 30  # none ran into the agent's time limit

    # Forged by the worker, from the hooks alone, within 90 s of the session's end.
    size = first.transcript.stat().st_size
    assert wait_until(
        lambda: forged_to(roster.runtime_dir, first.transcript) == size, FORGED_WITHIN
    ), f"forged to {forged_to(roster.runtime_dir, first.transcript)} of {size} bytes"
    forged_after = time.monotonic() - first.ended_at
    assert forged_after <= FORGED_WITHIN
    lessons = forged_lessons(roster.agents_dir, first.session_id)
    assert lessons, "the first session yielded no forge candidate"
    assert any("sudo" in body or "npm" in body or "node" in body for _, body in lessons), lessons

    # The Stop hooks forged the session piece by piece, each byte once.
    pieces = sorted(
        (r["start"], r["end"])
        for r in (
            line.value for line in read_jsonl(roster.runtime_dir / "hooks" / "sessions.jsonl").lines
        )
        if r["session_id"] == first.session_id
    )
    assert pieces[0][0] == 0 and pieces[-1][1] == size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))

    # A lesson of the first session reaches the agent in the second, with nobody promoting it:
    # the session's end sent the flywheel's close loop, which publishes high-confidence
    # candidates to the knowledge store as provisional lessons.
    store = roster.swarm_dir / "knowledge.jsonl"

    def published() -> list[str]:
        if not store.exists():
            return []
        entries = [
            json.loads(line) for line in store.read_text(encoding="utf-8").splitlines() if line
        ]
        return [e["id"] for e in entries]

    assert wait_until(lambda: bool(published()), FORGED_WITHIN), (
        "nothing of the first session was published"
    )
    added = published()
    second = replay(SECOND, project=project, claude_home=tmp_path / "claude", env=env)
    assert all(run.exit_code == 0 for run in second.runs)
    handed = [(run.event, run.context()) for run in second.runs if run.context()]
    print(
        f"forged {forged_after:.1f}s after the end; {len(lessons)} candidates, {len(added)} published"
    )
    for event, context in handed:
        print(f"{event}: {context!r:.400}")
    assert handed, "nothing was handed to the agent in the second session"
    _event, block = handed[0]
    trace = re.search(r"trace_id: (\S+)", block or "")
    assert trace is not None, block
    receipts = (roster.swarm_dir / RECEIPTS_FILE).read_text(encoding="utf-8")
    assert trace.group(1) in receipts  # recorded, so an acknowledgement closes the loop
    assert any(ident in (block or "") for ident in added)  # a lesson of the first session

    # The same swarm through Codex's hooks: a failing call reported by Codex's PostToolUse (no
    # failure event of its own) gets the lesson learned of that failure in the first session.
    installed = swarmq(
        "hooks", "install", "--agent", "codex", "--dir", str(project), cwd=project, env=env
    )
    assert installed.returncode == 0, installed.stderr
    codex_hooks = project / ".codex" / "hooks.json"
    payload = {
        "session_id": "codex-session-1",
        "turn_id": "turn-3",
        "transcript_path": None,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_use_id": "call_1",
        "tool_input": {"command": "sudo apt-get install -y jq"},
        "tool_response": "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nsudo: a terminal is "
        "required to read the password; either use the -S option to read from standard input "
        "or configure an askpass helper\nsudo: a password is required\n",
    }
    runs = run_hooks(codex_hooks, "PostToolUse", payload, cwd=project, env=env, subject="Bash")
    assert [r.exit_code for r in runs] == [0]
    recalled = runs[0].context()
    assert recalled is not None and "sudo" in recalled and "trace_id: " in recalled, runs[0].stdout
    ok = {
        **payload,
        "tool_input": {"command": "ls"},
        "tool_response": "Exit code: 0\nOutput:\nREADME.md\n",
    }
    quiet = run_hooks(codex_hooks, "PostToolUse", ok, cwd=project, env=env, subject="Bash")
    assert [(r.exit_code, r.stdout) for r in quiet] == [(0, "")]


CODEX_SESSION = SESSIONS / "cx-qna-speckit-specify.jsonl"


def test_a_codex_session_is_forged_and_closed_without_an_end_event(
    tmp_path: Path,
    roster_file: Path,
    state: Path,
    start_worker: Callable[..., Any],
) -> None:
    """Codex reports no session end: a piece that taught something new is closed at once, so
    its lessons reach the next session without waiting for the hourly close loop."""
    roster = load_roster(roster_file, env={})
    project = roster.workspace_dir
    env = hook_env(state)
    start_worker("w1", env={"SWARMQ_STATE": str(state)})
    installed = swarmq(
        "hooks", "install", "--agent", "codex", "--dir", str(project), cwd=project, env=env
    )
    assert installed.returncode == 0, installed.stderr
    rollout = tmp_path / "codex" / "sessions" / "2026" / "04" / "01" / "rollout-x.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(CODEX_SESSION.read_bytes())
    stop = {
        "session_id": "019d-codex",
        "turn_id": "turn-9",
        "transcript_path": str(rollout),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "stop_hook_active": False,
        "last_assistant_message": None,
    }
    runs = run_hooks(project / ".codex" / "hooks.json", "Stop", stop, cwd=project, env=env)
    assert [(r.exit_code, r.stdout) for r in runs] == [(0, "")]
    size = rollout.stat().st_size
    assert wait_until(lambda: forged_to(roster.runtime_dir, rollout) == size, FORGED_WITHIN)
    store = roster.swarm_dir / "knowledge.jsonl"
    assert wait_until(lambda: store.exists() and store.stat().st_size > 0, FORGED_WITHIN), (
        "the Codex session's lessons were not published"
    )
