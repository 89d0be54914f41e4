"""False candidates forge made on unseen users, by cause, not by session.

Small sessions written for these tests, in Claude Code's record shapes: the output of a command
the user ran with ``!`` (a ``git log`` whose commit subjects read like fixes) and a refusal that
another command of the same program, run beside it, is taken to have got past.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.forge.templates import is_pasted_log
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

_GIT_LOG = (
    "<bash-stdout>* 12d939e - (66 seconds ago) docs: Add the workflow notes - ann (HEAD -> main)\n"
    "* 2e5de86 - (55 minutes ago) feat: Add the specifications framework - ann\n"
    "* ed77663 - (3 weeks ago) fix: Update citation to use the correct BibTeX key - ann\n"
    "* cdbf03d - (4 months ago) fix: Clarify the project scope and its challenges - ann\n"
    "</bash-stdout><bash-stderr></bash-stderr>"
)


def _contents(session: ClaudeSession, tmp_path: Path, layout: AgentsLayout) -> list[str]:
    path = session.write(tmp_path / "s.jsonl")
    return [c.content for c in forge_transcript(path, layout, LocalLocks(tmp_path / "l")).found]


def test_a_git_log_is_machine_output() -> None:
    assert is_pasted_log(_GIT_LOG)
    assert is_pasted_log("a1b2c3d fix: the parser\n9f8e7d6 fix: the lexer\n0a1b2c3 add: docs\n")
    assert not is_pasted_log("I fixed it.\nThe deadbeef value is wrong.\nPlease check it.\n")


def test_the_output_of_a_users_git_log_is_no_lesson(tmp_path: Path, layout: AgentsLayout) -> None:
    session = ClaudeSession().user("<bash-input>git lg</bash-input>").user(_GIT_LOG)
    assert _contents(session, tmp_path, layout) == []


def test_another_command_of_the_program_does_not_get_past_a_refusal(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("make the feature branch")
        .bash(
            "git fetch --all --prune",
            "Exit code 255\nerror: cannot open '.git/FETCH_HEAD': Operation not permitted",
            error=True,
        )
        .bash(
            "git ls-remote --heads origin",
            "Exit code 128\nfatal: unable to access 'https://example.org/r.git/': "
            "Could not resolve host: example.org",
            error=True,
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert contents, contents
    assert not any("`git ls-remote --heads origin` worked instead" in c for c in contents), contents


def test_the_same_command_run_otherwise_still_gets_past_a_refusal(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash(
            "go test ./...",
            "Exit code 1\nopen /home/u/.cache/go-build/00/x: permission denied",
            error=True,
        )
        .bash(
            "GOCACHE=/tmp/go-build go test ./...",
            "Exit code 1\n--- FAIL: TestParse (0.00s)\n    parse_test.go:9: got 2, want 3",
            error=True,
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any("`GOCACHE=/tmp/go-build go test ./...` worked instead" in c for c in contents), (
        contents
    )
