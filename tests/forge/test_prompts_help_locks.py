"""Mechanisms of tools and harnesses found on unseen users' sessions, each met by more than one:
a command that waits for an answer no one gives (stopped, then run with ``--yes`` or ``echo y |``),
a ``--help`` call or a screenshot that only looks and cures nothing, a probe-led chain that
removes a stale lock, one escalation that gets two sandbox refusals past, and later Codex's
``SandboxDenied { message: … }`` report read for the command's own stderr.

Small sessions written for these tests, in Claude Code's and Codex's record shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt, program
from swarmq.forge._sequences import acts_on_files, reads_only
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _contents


def _waiting(task: str) -> ClaudeSession:
    session = ClaudeSession().user("shut the services down and bring them up again")
    session.bash("gt shutdown && gt up", f"Command running in background with ID: {task}.")
    return session.call(
        "Read",
        {"file_path": f"/tmp/claude/tasks/{task}.output"},
        "     1→Sessions to stop:\n     2→  → hq-mayor\n     3→\n     4→Proceed with shutdown? [y/N] \n",
    )


def test_a_stopped_command_run_again_with_its_answer_is_a_lesson(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = _waiting("b563cc0")
    session.call("TaskStop", {"task_id": "b563cc0"}, '{"message":"Successfully stopped task"}')
    session.bash("echo y | gt shutdown && gt up", "Sessions to stop: … done")
    [lesson] = [c for c in _contents(session, tmp_path, layout) if "waited for input" in c]
    assert lesson.startswith("`gt shutdown && gt up` waited for input until it was stopped")
    assert "Proceed with shutdown? [y/N]" in lesson and "`echo y | gt shutdown && gt up`" in lesson


def test_a_stopped_command_run_again_as_it_was_is_no_prompt_lesson(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = _waiting("b563cc0")
    session.call("TaskStop", {"task_id": "b563cc0"}, '{"message":"Successfully stopped task"}')
    session.bash("gt shutdown && gt up", "done")  # restarted, no answer given: a restart
    assert not [c for c in _contents(session, tmp_path, layout) if "waited for input" in c]


def test_an_answer_given_without_a_stop_is_no_prompt_lesson(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = _waiting("b563cc0")
    session.bash("npx skills add org/skills --global --yes", "Installed 8 skills")
    assert not [c for c in _contents(session, tmp_path, layout) if "waited for input" in c]


def test_a_help_call_is_no_cure_and_the_call_after_it_is(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    usage = "Usage: claude mcp add [options] <name> <commandOrUrl> [args...]"
    session = (
        ClaudeSession()
        .user("claude mcp add figma")
        .bash(
            "claude mcp add figma 2>&1",
            "Exit code 1\nerror: missing required argument 'commandOrUrl'",
            error=True,
        )
        .bash("claude mcp add --help 2>&1", usage)
        .bash(
            "claude mcp add --transport http figma https://mcp.figma.test/mcp 2>&1",
            "Added HTTP MCP server figma",
        )
    )
    [lesson] = _contents(session, tmp_path, layout)
    assert "--help" not in lesson, lesson
    assert "`claude mcp add --transport http figma" in lesson, lesson
    assert reads_only("code --help 2>&1 | head -30") and reads_only("man rsync")
    assert not reads_only("npm install --help-me")


def test_a_screenshot_of_a_server_is_no_cure_for_its_start(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    start = "mcp__Claude_Preview__preview_start"
    spawn = (
        "Failed to start server: Failed to start preview server: Failed to spawn process: No "
        "such file or directory\n\nCheck the command in .claude/launch.json and try again."
    )
    session = ClaudeSession().user("start the dev server")
    session.call(start, {"name": "Next.js Dev"}, "")
    session.records[-1]["message"]["content"][0].update(content=spawn, is_error=True)
    session.bash("which npm", "Exit code 1\nnpm not found", error=True)
    session.call("Edit", {"file_path": "/w/.claude/launch.json", "old_string": "npm"}, "ok")
    session.call(start, {"name": "Next.js Dev"}, "Server started successfully on port 3002.")
    session.call("mcp__Claude_Preview__preview_screenshot", {"serverId": "a5c4"}, "")
    assert not [c for c in _contents(session, tmp_path, layout) if "preview_screenshot" in c]


def test_a_probe_led_chain_that_removes_a_lock_is_the_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    locked = (
        "Exit code 128\nfatal: Unable to create '/w/app/.git/index.lock': File exists.\n\n"
        "Another git process seems to be running in this repository"
    )
    remove = "test -f .git/index.lock && rm .git/index.lock && echo removed || echo no-lock"
    session = (
        ClaudeSession()
        .user("merge the branch")
        .bash("git checkout main && git pull origin main", locked, error=True)
        .bash(remove, "removed")
        .bash("git checkout main && git pull origin main", "Switched to branch 'main'")
    )
    [lesson] = _contents(session, tmp_path, layout)
    assert "index.lock" in lesson and "File exists" in lesson, lesson
    assert f"after `{remove}` the same call worked" in lesson, lesson
    assert acts_on_files(remove) and not acts_on_files("test -f .git/index.lock && echo there")


def test_a_quoted_variable_before_the_command_is_not_its_program() -> None:
    call = 'BRANCH="feat/resume-$(date +\'%H%M\')"; git checkout -b "$BRANCH" && echo "$BRANCH"'
    assert program(call) == "git"
    assert program("A='x y' B=\"1 2\" npm test") == "npm"
    assert program("X=1 make") == "make"


def _codex(path: Path, steps: list[tuple[str, str, bool]]) -> Path:
    """A current Codex rollout: ``(cmd, output, escalated)`` exec_command calls."""
    lines: list[dict[str, Any]] = [
        {
            "timestamp": "2026-03-08T01:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "019d-test", "cwd": "/work/app", "originator": "codex_cli_rs"},
        },
        {
            "timestamp": "2026-03-08T01:00:01.000Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": "start the feature branch"}]},
        },
    ]  # fmt: skip
    for n, (cmd, output, escalated) in enumerate(steps):
        arguments: dict[str, Any] = {"cmd": cmd, "workdir": "/work/app"}
        if escalated:
            arguments["sandbox_permissions"] = "require_escalated"
        for payload in (
            {"type": "function_call", "name": "exec_command",
             "arguments": json.dumps(arguments), "call_id": f"c{n}"},
            {"type": "function_call_output", "call_id": f"c{n}", "output": output},
        ):  # fmt: skip
            lines.append(
                {
                    "timestamp": f"2026-03-08T01:01:{n:02d}.000Z",
                    "type": "response_item",
                    "payload": payload,
                }
            )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _exited(code: int, output: str) -> str:
    return f"Chunk ID: e7d73a\nWall time: 0.05 seconds\nProcess exited with code {code}\nOutput:\n{output}"  # fmt: skip


def test_one_escalation_past_two_refusals_names_the_sandbox_in_both(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    slash = 'B="feat/x-$(date +%H)"; git checkout -b "$B" && echo "$B"'
    dash = 'B="feat-x-$(date +%H)"; git checkout -b "$B" && echo "$B"'
    denied = (
        'exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output: '
        'ExecToolCallOutput { exit_code: 128, stdout: StreamOutput { text: \\"\\", '
        'truncated_after_lines: None }, stderr: StreamOutput { text: \\"fatal: cannot lock ref '
        "'refs/heads/feat-x-02': Unable to create '/work/app/.git/refs/heads/feat-x-02.lock': "
        'Operation not permitted\\\\n\\", truncated_after_lines: None } })))" }'
    )
    path = _codex(
        tmp_path / "s.jsonl",
        [
            (
                slash,
                _exited(
                    128,
                    "fatal: cannot lock ref 'refs/heads/feat/x-02': unable to create directory for .git/refs/heads/feat/x-02\n",
                ),
                False,
            ),
            (dash, denied, False),
            (dash, _exited(0, "Switched to a new branch 'feat-x-02'\n"), True),
        ],
    )
    lessons = [c.content for c in forge_transcript(path, layout, LocalLocks(tmp_path / "l")).found]
    assert len(lessons) == 2, lessons
    for lesson in lessons:
        assert "cannot lock ref" in lesson and "the sandbox refuses `git` here" in lesson, lesson
        assert "require_escalated" in lesson, lesson


def test_later_codex_sandbox_report_is_read_for_the_commands_stderr() -> None:
    report = (
        "exec_command failed for `/bin/zsh -lc 'bash hooks/auto-commit.sh after_implement'`: "
        'SandboxDenied { message: "[specify] Error: git add failed: fatal: Unable to create '
        "'/w/app/.git/index.lock': Operation not permitted\\n\", output: ExecToolCallOutput { "
        'exit_code: 1, stdout: StreamOutput { text: "", truncated_after_lines: None }, stderr: '
        'StreamOutput { text: "[specify] Error: git add failed: fatal: Unable to create '
        "'/w/app/.git/index.lock': Operation not permitted\\n\", truncated_after_lines: None } } }"
    )
    excerpt = error_excerpt(report)
    assert "Operation not permitted" in excerpt and "SandboxDenied" not in excerpt, excerpt


def test_the_older_seatbelt_report_keeps_the_commands_own_short_error() -> None:
    report = (
        "failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, "
        "exit code: 1, stdout: \n NX   Failed to start plugin worker.\n\n\n, stderr: "
    )
    assert error_excerpt(report).endswith("; NX   Failed to start plugin worker."), error_excerpt(
        report
    )
    log = "\n".join(f"   Compiling crate{n} v0.0.0" for n in range(8))
    test_run = (
        "failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, "
        "exit code: 101, stdout: \nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed\n"
        f"running 26 tests\ntest a ... ok\ntest b ... FAILED\n, stderr: {log}\n"
    )
    assert "0 failed" not in error_excerpt(test_run)  # a test run's log is not the message


def test_a_missing_first_program_piped_into_tail_failed_all_the_same(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    scaffold = "npx create-next-app@latest . --yes 2>&1 | tail -5"
    session = (
        ClaudeSession()
        .user("scaffold the app")
        .bash(scaffold, "(eval):1: command not found: npx")  # the pipeline's status is tail's
        .bash(f'export PATH="$PATH:/opt/homebrew/bin" && {scaffold}', "Success! Created app")
    )
    [lesson] = _contents(session, tmp_path, layout)
    assert "command not found: npx" in lesson and "/opt/homebrew/bin" in lesson, lesson
    asked = ClaudeSession().user("is it gone?").bash("opencode --version 2>&1 || true", "zsh:1: command not found: opencode")  # fmt: skip
    asked.bash("rg -n opencode ~/.zshrc || true", "")
    assert not _contents(asked, tmp_path, layout)  # a fallback given: the call asked a question


def test_a_windows_launcher_by_its_quoted_path_runs_the_program_that_refused(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    code_cmd = '"/c/Users/me/AppData/Local/Programs/Microsoft VS Code/bin/code.cmd"'
    assert program(f"{code_cmd} --install-extension x") == "code"
    assert program('"C:\\Program Files\\nodejs\\node.exe" x.js') == "node.exe"
    refused = (
        "Exit code 9\nC:\\Users\\me\\AppData\\Local\\Programs\\Microsoft VS Code\\code.exe: "
        "bad option: --install-extension"
    )
    session = (
        ClaudeSession()
        .user("install the extensions")
        .bash("code --install-extension eamodio.gitlens", refused, error=True)
        .bash("code --help 2>&1 | head -30", "Usage: node [options] [ script.js ]")
        .bash(f"{code_cmd} --install-extension eamodio.gitlens 2>&1", "Extension installed.")
    )
    [lesson] = _contents(session, tmp_path, layout)
    assert "bad option: --install-extension" in lesson and "code.cmd" in lesson, lesson
