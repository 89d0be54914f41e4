"""What a careful engineer does not keep from failing tool calls, and how a kept one reads.

The examples are written for these tests, in the shapes of the real sessions: a search that
matched nothing (under a sandbox's start-up chatter), a probe of a file that is not there
followed by another file, a later call on other files that is the next step rather than a cure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt, exit_status, operands
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, codex_old_rollout

CHATTER = (
    "/opt/homebrew/Library/Homebrew/cmd/shellenv.sh: line 18: /bin/ps: Operation not permitted"
)


def sequences(found: list[object]) -> list[str]:
    return [c.content for c in found if getattr(c, "extractor", "") == "sequence"]  # type: ignore[attr-defined]


def test_a_search_that_matched_nothing_is_no_failure_even_under_start_up_chatter(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("find the spec files")
        .bash("rg --files -g '*.spec.yaml'", f"Exit code 1\n{CHATTER}\n", error=True)
        .bash("grep -rn 'class Spec' src", "Exit code 1\n", error=True)
        .bash("find . -name '*.spec.yaml'", f"{CHATTER}\n./.hidden/specs/a.spec.yaml")
    )
    assert (
        sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found) == []
    )


def test_a_search_that_errs_is_still_a_failure_and_its_fix_a_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "where is parse( called?"),
            (
                "shell",
                (["bash", "-lc", "rg -n 'parse(' src"], "rg: regex parse error: unclosed group", 2),
            ),
            (
                "assistant",
                "The pattern is read as a regex, so the bracket must be taken literally.",
            ),
            ("shell", (["bash", "-lc", "rg -n -F 'parse(' src"], "src/a.py:3: parse(x)", 0)),
        ],
    )
    [content] = sequences(forge_transcript(path, layout, locks).found)
    assert content == (
        "`rg -n 'parse(' src` failed (rg: regex parse error: unclosed group); "
        "The pattern is read as a regex, so the bracket must be taken literally; "
        "`rg -n -F 'parse(' src` worked instead."
    )  # the call as run, the error as printed, the cause, the fix: in that order


def test_a_probe_of_a_missing_file_followed_by_another_file_is_not_a_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("read the analyzers")
        .bash(
            "sed -n '1,200p' pkg/analyzers/quickfix.py",
            "Exit code 1\nsed: pkg/analyzers/quickfix.py: No such file or directory",
            error=True,
        )
        .bash("ls pkg/analyzers", "__init__.py\ndocstrings.py")
        .bash("sed -n '1,200p' pkg/analyzers/docstrings.py", '"""Docstrings."""')
    )
    assert (
        sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found) == []
    )


def test_a_call_on_other_files_is_the_next_step_not_the_fix(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("check both services")
        .bash(
            "curl -sS https://billing.internal.example/health",
            "Exit code 6\ncurl: (6) Could not resolve host: billing.internal.example",
            error=True,
        )
        .bash("curl -sS http://localhost:8080/health", "ok")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert [c for c in found if "worked instead" in c] == []
    [content] = found  # the failure about the machine is still kept, unresolved
    assert "Could not resolve host" in content
    assert content.endswith("`curl` cannot reach the network here.")


def test_a_fix_that_changes_how_the_same_file_is_named_is_still_the_fix(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("build it")
        .bash(
            'node "E:\\work\\tools\\build.js"',
            "Exit code 2\n/usr/bin/bash: eval: line 1: unexpected EOF while looking for matching `\"'",
            error=True,
        )
        .bash('node "E:/work/tools/build.js"', "built")
    )
    [content] = sequences(
        forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found
    )
    assert "unexpected EOF while looking for matching" in content
    assert content.endswith('`node "E:/work/tools/build.js"` worked instead.')


def test_a_missing_program_is_not_a_missing_file() -> None:
    # the program is the call's first word, not an operand: its absence stays a lesson
    from swarmq.forge._sequences import SequenceMiner

    assert not SequenceMiner._missing_operand("python scripts/x.py", "python: command not found")
    assert SequenceMiner._missing_operand(
        "cat notes/todo.md", "cat: notes/todo.md: No such file or directory"
    )


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("Exit code: 1\nWall time: 0.1 seconds\nOutput:\n", 1),
        ('{"output":"","metadata":{"exit_code":2,"duration_seconds":0.1}}', 2),
        ("Process exited with code 127\nOriginal token count: 3", 127),
        ("all good", None),
    ],
)
def test_exit_status_in_each_tool_form(text: str, status: int | None) -> None:
    assert exit_status(text) == status


def test_operands_reduce_paths_to_their_last_part() -> None:
    every, paths = operands('cd /repo && FOO=1 cat -n "E:\\a\\b.json" README')
    assert every == {"b.json", "readme"} and paths == {"b.json"}
    assert operands("npm create vite --yes") == (frozenset({"create", "vite"}), frozenset())


def test_start_up_chatter_alone_is_no_error_excerpt() -> None:
    assert error_excerpt(f"Exit code: 1\nWall time: 0 seconds\nOutput:\n{CHATTER}\n") == ""
    assert error_excerpt(f"{CHATTER}\nzsh:1: command not found: pytest") == (
        "zsh:1: command not found: pytest"
    )


@pytest.mark.parametrize(
    ("command", "output"),
    [
        # the tests failed: the code was wrong, not the machine
        ("yarn test --filter=loading-state", "Exit code 1\nTestem finished. Tests failed."),
        ("cd /srv/app && go test ./...", "Exit code 1\n--- FAIL: TestOrder (0.00s)\nFAIL"),
        # a lookup whose failing is its answer, behind a cd
        ("cd /srv/app && git show 1a2b3c4 --stat", "Exit code 128\nfatal: bad object 1a2b3c4"),
        ("cd /srv/app && git branch -l", "Exit code 1\nerror: unknown switch"),
        # the directory changed into is not there: the agent was elsewhere
        (
            "cd services/api && make build",
            "Exit code 1\n(eval):cd:1: no such file or directory: services/api",
        ),
    ],
)
def test_failures_that_teach_nothing_about_the_machine(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks, command: str, output: str
) -> None:
    session = (
        ClaudeSession()
        .user("go")
        .bash(command, output, error=True)
        .bash(command.split(" && ")[-1] + " --verbose", "ok")
    )
    assert (
        sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found) == []
    )


def test_a_test_run_that_cannot_start_is_an_environment_fact(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash("npm test", "Exit code 1\nError: Cannot find module 'vitest'", error=True)
        .say("Done with the edit.")
    )
    result = forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert sequences(result.found) == []  # not a code failure, and not about the machine: no
    # lesson of its own, but not dropped as a test failure either: it waits for its fix
    session.bash("npm install -D vitest && npm test", "3 passed")
    [content] = sequences(
        forge_transcript(session.write(tmp_path / "t.jsonl"), layout, locks).found
    )
    assert content == (
        "`npm test` failed (Error: Cannot find module 'vitest'); "
        "`npm install -D vitest && npm test` worked instead."
    )


def test_another_version_of_the_same_thing_is_a_fix_not_another_target(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("pull the dev image")
        .bash(
            "docker pull registry.example/devimage:1-24-slim",
            'Exit code 1\nError response from daemon: failed to resolve reference "registry.example/'
            'devimage:1-24-slim": not found',
            error=True,
        )
        .bash("docker pull registry.example/devimage:24", "24: Pulling from devimage")
    )
    [content] = sequences(
        forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found
    )
    assert content.endswith("`docker pull registry.example/devimage:24` worked instead.")
    assert operands("pip install foo==1.2") == (frozenset({"install", "foo"}), frozenset({"foo"}))


def test_a_test_script_that_does_not_exist_is_not_a_test_failure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the web tests")
        .bash(
            "npm test -- src/sync.test.js",
            'Exit code 1\nnpm error Missing script: "test"',
            error=True,
        )
        .bash("npm exec mocha src/sync.test.js", "12 passing")
    )
    [content] = sequences(
        forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found
    )
    assert 'Missing script: "test"' in content
    assert content.endswith("`npm exec mocha src/sync.test.js` worked instead.")


def test_a_powershell_error_record_is_told_by_its_message_and_id_in_any_language() -> None:
    """Its ``+ CategoryInfo`` line says only "ParserError"; the message above the position and
    the echoed code says what went wrong, and the error id is English in every locale."""
    german = (
        'Die Zeichenfolge hat kein Abschlusszeichen: ".\r\n'
        "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\r\n"
        "    + FullyQualifiedErrorId : TerminatorExpectedAtEndOfString\r\n \r\n"
    )
    assert error_excerpt(german) == (
        'Die Zeichenfolge hat kein Abschlusszeichen: ". (TerminatorExpectedAtEndOfString)'
    )
    english = (
        "Get-Content : Cannot find path 'C:\\x.txt' because it does not exist.\n"
        "At line:1 char:1\n+ Get-Content x.txt\n+ ~~~~~~~~~~~~~~~~~\n"
        "    + CategoryInfo          : ObjectNotFound: (C:\\x.txt:String) [Get-Content], "
        "ItemNotFoundException\n"
        "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.GetContentCommand"
    )
    assert error_excerpt(english) == (
        "Get-Content : Cannot find path 'C:\\x.txt' because it does not exist. (PathNotFound)"
    )


def test_a_powershell_parse_report_is_told_by_its_first_error() -> None:
    """The error id names the first error; the report's last line ("Not all parse errors were
    reported") says nothing of what went wrong."""
    report = (
        "In Zeile:1 Zeichen:25\\r\\n+ apply_patch << 'PATCH'\\r\\n+                         ~\\r\\n"
        "Dateispezifikation nach dem Umleitungsoperator fehlt.\\r\\nIn Zeile:3 Zeichen:1\\r\\n"
        '+ *** Update File: a.html\\r\\n+ ~\\r\\nDer unäre Operator "*" fehlt.\\r\\n'
        "Es wurden nicht alle Analysefehler berichtet. Korrigieren Sie die berichteten Fehler, "
        "und versuchen Sie es erneut.\\r\\n    + CategoryInfo          : ParserError: (:) [], "
        "ParentContainsErrorRecordException\\r\\n"
        "    + FullyQualifiedErrorId : MissingFileSpecification\\r\\n \\r\\n"
    )
    assert error_excerpt(report) == (
        "Dateispezifikation nach dem Umleitungsoperator fehlt. (MissingFileSpecification)"
    )
