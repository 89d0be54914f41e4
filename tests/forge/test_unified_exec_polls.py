"""Codex's unified exec: a command that outlives its call returns "Process running with session
ID N", and its output and exit status come back later, in the answers to ``write_stdin`` polls of
session N. Forge reads those answers as the command's own: the failure a poll reports is the
command's failure, and a command still running has neither failed nor worked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks

_CACHE_DENIED = (
    "Building for debugging...\n"
    "<unknown>:0: error: error opening '/Users/me/.cache/clang/ModuleCache/"
    "Swift-3AJJN1UPT8RFK.swiftmodule' for output: /Users/me/.cache/clang/ModuleCache: "
    "Operation not permitted\n"
)


class _UnifiedExec:
    """A current Codex rollout whose commands run through ``exec_command``/``write_stdin``."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [
            {
                "timestamp": "2026-04-14T14:20:00.000Z",
                "type": "session_meta",
                "payload": {"id": "019d8c2a-0000", "cwd": "/work/app", "originator": "codex_cli_rs"},
            },
            self._item({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Run the tests and fix what fails"}]}),
        ]  # fmt: skip
        self.calls = 0

    def _item(self, payload: dict[str, Any]) -> dict[str, Any]:
        second = len(getattr(self, "lines", []))
        return {
            "timestamp": f"2026-04-14T14:21:{second:02d}.000Z",
            "type": "response_item",
            "payload": payload,
        }

    def _call(self, name: str, arguments: dict[str, Any], output: str) -> _UnifiedExec:
        self.calls += 1
        call_id = f"call_{self.calls}"
        self.lines.append(self._item({"type": "function_call", "name": name,
                                      "arguments": json.dumps(arguments), "call_id": call_id}))  # fmt: skip
        self.lines.append(
            self._item({"type": "function_call_output", "call_id": call_id, "output": output})
        )
        return self

    def run(self, cmd: str, output: str, *, escalated: bool = False) -> _UnifiedExec:
        arguments: dict[str, Any] = {"cmd": cmd, "workdir": "/work/app", "yield_time_ms": 1000}
        if escalated:
            arguments["sandbox_permissions"] = "require_escalated"
        return self._call("exec_command", arguments, output)

    def poll(self, session: int, output: str) -> _UnifiedExec:
        arguments = {"session_id": session, "chars": "", "yield_time_ms": 1000}
        return self._call("write_stdin", arguments, output)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def _running(session: int) -> str:
    return (
        "Chunk ID: 3676c1\nWall time: 1.0019 seconds\n"
        f"Process running with session ID {session}\nOriginal token count: 54\nOutput:\n"
        "Building for debugging...\n[0/4] Write sources\n"
    )


def _exited(code: int, output: str) -> str:
    return (
        f"Chunk ID: 03b3af\nWall time: 4.1669 seconds\nProcess exited with code {code}\n"
        f"Original token count: 270\nOutput:\n{output}"
    )


def _contents(path: Path, layout: AgentsLayout, locks: LocalLocks) -> list[str]:
    return [c.content for c in forge_transcript(path, layout, locks).found]


def test_a_polled_failure_is_the_commands_and_its_escalated_rerun_the_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        _UnifiedExec()
        .run("swift test", _running(58022))
        .poll(58022, _exited(1, _CACHE_DENIED))
        .run("swift test", _running(68185), escalated=True)
        .poll(
            68185, _exited(0, "Test Suite 'All tests' passed\nExecuted 12 tests, with 0 failures")
        )
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert lesson.startswith("`swift test` failed")
    assert "ModuleCache: Operation not permitted" in lesson and "sandbox refuses `swift`" in lesson
    assert "require_escalated" in lesson  # the cure: the same command out of the sandbox


def test_a_command_still_running_has_not_worked(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """A running command is no cure of the failure before it: only its poll tells."""
    session = (
        _UnifiedExec()
        .run("npm test", _exited(1, "sh: 1: jest: not found\n"))
        .run("npx jest", _running(5577))
        .poll(
            5577,
            _exited(1, "FAIL src/app.test.ts\n  ● renders\n    expect(received).toBe(expected)\n"),
        )
    )
    for lesson in _contents(session.write(tmp_path / "s.jsonl"), layout, locks):
        assert "`npx jest` worked" not in lesson


def test_a_poll_of_an_unknown_session_is_still_a_poll(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """A poll whose start is not in the file (a resumed session) is judged as before: its
    output is the process's, and its failure no lesson of ``write_stdin``'s."""
    session = _UnifiedExec().poll(999, _exited(1, "error: build failed\n"))
    assert _contents(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_a_command_behind_rtk_is_that_command() -> None:
    """``rtk`` (a proxy that shortens what commands print) runs the command after it: the
    program is that command's, and ``rtk swift test`` is a test run like ``swift test``."""
    from swarmq.forge._calls import program
    from swarmq.forge._sequences import _test_run

    assert program("rtk swift test") == "swift"
    assert program("rtk proxy find .build -name '*.bundle'") == "find"
    assert program("cd /work/app && rtk git status --short") == "git"
    assert program("rtkit build") == "rtkit"
    assert _test_run("rtk swift test --filter LocalizationResourceTests")
    assert _test_run("swift test") and _test_run("xcodebuild test -scheme App")
    assert not _test_run("swift build")
