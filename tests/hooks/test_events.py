"""What the hook makes of the agents' payloads, and the spool it leaves work in."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from swarmq.hooks.events import MAX_TEXT, failed, parse, reply
from swarmq.storage.spool import STALE_CLAIM_SECONDS, Spool


def test_claude_code_failure_carries_the_call_and_its_error() -> None:
    call = parse(
        "claude-code",
        json.dumps(
            {
                "session_id": "s1",
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": "python manage.py test"},
                "error": "Exit code 127\nzsh: command not found: python",
                "is_interrupt": False,
            }
        ),
    )
    assert call.action == "failure"
    assert (
        call.failure_text()
        == "$ python manage.py test\nExit code 127\nzsh: command not found: python"
    )
    interrupted = parse(
        "claude-code",
        json.dumps({"hook_event_name": "PostToolUseFailure", "error": "x", "is_interrupt": True}),
    )
    assert interrupted.failure_text() is None


def test_a_long_failure_keeps_its_last_lines_where_a_traceback_states_it() -> None:
    frames = "".join(
        f'  File "lib/m{i}.py", line {i}, in f{i}\n    f{i + 1}()\n' for i in range(400)
    )
    error = f"Exit code 1\nTraceback (most recent call last):\n{frames}"
    error += "UnicodeEncodeError: 'gbk' codec can't encode character '\\u2705' in position 0"
    payload = {
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "superclaude install"},
        "error": error,
    }
    text = parse("claude-code", json.dumps(payload)).failure_text()
    assert text is not None and len(error) > MAX_TEXT >= len(text)
    assert text.startswith("$ superclaude install\nExit code 1")
    assert text.endswith(
        "UnicodeEncodeError: 'gbk' codec can't encode character '\\u2705' in position 0"
    )


def test_codex_post_tool_use_is_a_failure_only_when_its_result_failed() -> None:
    def codex(response: object) -> str | None:
        payload = {
            "session_id": "s",
            "turn_id": "t1",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "sudo apt install jq"},
            "tool_response": response,
        }
        return parse("codex", json.dumps(payload)).failure_text()

    assert codex("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok") is None
    assert codex({"exit_code": 0, "output": "fine"}) is None
    text = codex("Process exited with code 1\nOutput:\nsudo: a terminal is required")
    assert text is not None and text.startswith("$ sudo apt install jq")
    assert codex({"exit_code": 2, "stderr": "no"}) is not None
    assert failed(json.dumps({"exitCode": 1}))
    assert not failed(None)


def test_reply_is_the_agents_additional_context_or_nothing() -> None:
    assert reply("SessionStart", None) == ""
    out = json.loads(reply("UserPromptSubmit", "<swarm_knowledge_directives>…"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "<swarm_knowledge_directives>…",
        }
    }
    assert parse("codex", "not json").action is None
    assert parse("claude-code", json.dumps({"hook_event_name": "Notification"})).action is None


def test_spool_claims_once_releases_and_takes_back_stale_claims(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    first = spool.put({"n": 1})
    spool.put({"n": 2})
    (tmp_path / "spool" / "torn.json").write_text("{", encoding="utf-8")
    claimed = list(spool.claim())
    assert [c.record["n"] for c in claimed] == [1, 2]
    assert (tmp_path / "spool" / "torn.json.bad").exists()  # kept, never dropped
    assert list(Spool(tmp_path / "spool").claim()) == []  # nobody claims twice
    claimed[0].release()
    claimed[1].done()
    assert spool.pending() == [first]
    again = next(iter(spool.claim()))
    old = time.time() - STALE_CLAIM_SECONDS - 1
    os.utime(again.path, (old, old))  # its drainer died
    assert spool.pending() == [first]


def test_the_hook_command_never_fails_the_session(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SWARMQ_CONFIG"}
    env["SWARMQ_STATE"] = str(tmp_path / "state")
    cases = [
        (["claude-code"], b"not json at all"),
        (["claude-code"], json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path)}).encode()),
        (["codex"], json.dumps({"hook_event_name": "SessionStart", "cwd": str(tmp_path)}).encode()),
        (["no-such-agent"], b"{}"),
    ]
    for argv, stdin in cases:
        done = subprocess.run(
            [sys.executable, "-m", "swarmq.hooks", *argv],
            input=stdin,
            capture_output=True,
            cwd=tmp_path,  # no swarm.yaml here or above: nothing to do, silently
            env=env,
            check=False,
            timeout=30,
        )
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
    assert b"unknown agent" in done.stderr  # said where the agent shows it, still exit 0


def test_a_missions_own_agent_leaves_its_session_to_the_mission(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "swarm.yaml").write_text("swarm: x\n", encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "SWARMQ_CONFIG"}
    env.update(SWARMQ_STATE=str(tmp_path / "state"), SWARMQ_MISSION_ID="m-1")
    stop = {"hook_event_name": "Stop", "cwd": str(tmp_path), "transcript_path": str(transcript)}
    done = subprocess.run(
        [sys.executable, "-m", "swarmq.hooks", "claude-code"],
        input=json.dumps(stop).encode(),
        capture_output=True,
        env=env,
        check=False,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (tmp_path / "state").exists()  # nothing spooled: the mission forges it
