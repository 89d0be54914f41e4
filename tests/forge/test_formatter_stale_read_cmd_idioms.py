"""Three failures forge kept without their cure (or not at all), each a behaviour many users of
Claude Code meet: a formatter's check failing until the formatter runs, Claude Code's Edit
refusing a file changed since it was read, and cmd.exe/PowerShell idioms typed into Git Bash.

The sessions are written for these tests in the shapes of the real ones (a Windows project on
Git Bash); names and paths are invented.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._gitbash import cmd_idioms
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, sequences

GATE = (
    "cd /c/work/app && python -m ruff format --check . && python -m mypy . && python -m pytest -q"
)
UNFORMATTED = (
    "Exit code 1\nWould reformat: src\\app\\core.py\nWould reformat: tests\\test_core.py\n"
    "2 files would be reformatted, 8 files already formatted"
)
REFUSED = "File has been unexpectedly modified. Read it again before attempting to write it."


def test_a_formatter_check_cured_by_the_formatter_is_kept_with_the_formatter_as_its_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the quality gate")
        .bash(GATE, UNFORMATTED, error=True)
        .say("There are formatting issues. Let me fix them.")
        .bash(
            "cd /c/work/app && python -m ruff format .",
            "2 files reformatted, 8 files left unchanged",
        )
        .bash(GATE, "10 files already formatted\nSuccess: no issues found\n3 passed in 0.02s")
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert found[0].startswith(f"`{GATE}` failed (Would reformat: src\\app\\core.py")
    assert "run the formatter (`ruff format .`) before the check" in found[0]
    assert found[0].endswith(
        "after `cd /c/work/app && python -m ruff format .` the same call worked."
    )


def test_a_formatter_check_never_passed_again_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """Unformatted files once are no lesson: only the formatter run, then the check passing,
    shows the cure (a black check that failed and was left so says nothing)."""
    session = (
        ClaudeSession()
        .user("check the formatting")
        .bash(
            "black --check src", "would reformat src/a.py\n1 file would be reformatted.", error=True
        )
        .say("Formatting is off in src/a.py; I will leave it for now.")
        .bash("git status", "On branch main")
    )
    assert sequences(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_a_stale_read_refusal_is_kept_with_its_cure_and_the_cause_the_session_shows(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    edit = {"file_path": "C:/work/app/src/runner.py", "old_string": "a", "new_string": "b"}
    session = ClaudeSession().user("fix the long lines in runner.py")
    session.call("Read", {"file_path": "C:/work/app/src/runner.py"}, "1→import os", error=False)
    session.call("Edit", edit, REFUSED, error=True)
    session.call("Read", {"file_path": "C:/work/app/src/runner.py"}, "1→import os", error=False)
    session.call("Edit", edit, REFUSED, error=True)
    session.bash("cat -A src/runner.py", "import os^M$\n^M$\n")
    session.call(
        "Write",
        {"file_path": "C:/work/app/src/runner.py", "content": "import os\n"},
        "The file C:/work/app/src/runner.py has been updated.",
        error=False,
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert f"({REFUSED})" in found[0]
    assert "read the file again right before each Edit" in found[0]
    assert "Write the whole file straight after a Read" in found[0]
    assert "the file has Windows (CRLF) line endings" in found[0]


def test_a_stale_read_on_another_file_is_the_same_lesson_with_the_formatter_as_its_cause(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = ClaudeSession().user("tidy both modules")
    session.bash("ruff format src", "2 files reformatted")
    for name in ("a", "b"):
        edit = {"file_path": f"/w/{name}.py", "old_string": "x", "new_string": "y"}
        session.call("Edit", edit, REFUSED, error=True)
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "here `ruff format` rewrote files in place" in found[0]


def test_the_other_wording_of_the_refusal_met_again_is_kept_too(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    refused = "File has been modified since read, either by the user or by a linter. Read it again."
    session = ClaudeSession().user("rename the helper")
    for _ in range(2):
        session.call("Read", {"file_path": "/w/b.py"}, "1→x = 1", error=False)
        session.call("Write", {"file_path": "/w/b.py", "content": "z"}, refused, error=True)
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "read the file again right before each Edit" in found[0]


def test_a_refusal_got_past_by_the_read_it_asks_for_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    edit = {"file_path": "/w/a.py", "old_string": "x", "new_string": "y"}
    session = ClaudeSession().user("rename x")
    session.call("Edit", edit, REFUSED, error=True)
    session.call("Read", {"file_path": "/w/a.py"}, "1→x = 1", error=False)
    session.call("Edit", edit, "The file /w/a.py has been updated.", error=False)
    assert sequences(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_cmd_idioms_in_git_bash_are_an_environment_fact_with_their_bash_form(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash(
            "cd /d C:\\work\\app && python -m pytest -q",
            "Exit code 1\n/usr/bin/bash: line 1: cd: too many arguments",
            error=True,
        )
        .bash('python -m pytest "C:\\work\\app\\tests" -q', "3 passed")
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "the Bash tool on Windows is Git Bash" in found[0]
    assert "`cd /c/dir`" in found[0]
    assert "`2>/dev/null`, `VAR=value command`" in found[0]  # the other idioms' forms too


def test_each_idiom_has_its_bash_form_only_when_bash_refused_one() -> None:
    bash = "/usr/bin/bash: line 1: "
    assert "`cat FILE`" in cmd_idioms('type "C:\\a\\b.py"', bash + "type: C:\\a\\b.py: not found")
    assert "`2>/dev/null`" in cmd_idioms("ls x 2>$null", bash + "$null: ambiguous redirect")
    both = cmd_idioms(
        "chcp 65001 && set PYTHONIOENCODING=utf-8 && tool install", bash + "chcp: command not found"
    )
    assert "no `chcp`" in both and "`VAR=value command`" in both
    assert cmd_idioms("type python", "python is /usr/bin/python") == ""  # bash's own `type`
    assert cmd_idioms("set -e && make", bash + "make: command not found") == ""
    assert cmd_idioms("cd /d C:\\x", "The system cannot find the path specified.") == ""
