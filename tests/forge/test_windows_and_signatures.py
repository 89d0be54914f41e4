"""Windows shell and console facts, one failure per program family, and exit codes read after
a long command header (the 2026-12-05 third forge session).

The sessions are written for these tests in the shapes of the real ones in eval/forge/sessions:
Git Bash turning ``taskkill /F`` into ``F:/`` and ``schtasks /Query`` into ``E:/Git/Query``
(its message in the console's code page, unreadable), Python printing in GBK, Windows' Store
alias for ``python`` answering "Exit code 49" and nothing else, the Codex sandbox refusing two
programs with the same words, and a current Codex ``exec_command`` result that repeats a long
command before its exit line.
"""

from __future__ import annotations

import json
from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import exit_status, program
from swarmq.forge._envfacts import (
    environment_fact,
    family,
    rewritten_switch,
    store_alias,
    windows_fact,
)
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from swarmq.transcripts.values import headed_exit, reports_failure
from tests.forge.sessions import ClaudeSession, codex_old_rollout

GARBLED = "\ufffd\ufffd\ufffd\ufffd: \ufffd\ufffdЧ\ufffd\ufffd\ufffd\ufffd/ѡ\ufffd\ufffd - "
"""How a Chinese Windows console's "错误: 无效参数/选项 - " reaches the agent (GBK read as UTF-8)."""


def sequences(found: list[object]) -> list[str]:
    return [c.content for c in found if getattr(c, "extractor", "") == "sequence"]  # type: ignore[attr-defined]


def test_git_bash_rewriting_a_switch_into_a_drive_is_a_fact_whatever_the_message_says(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("kill the old dev server")
        .bash("taskkill /F /PID 24648", GARBLED + "'F:/'\ufffd\ufffd", error=True)
        .bash("taskkill //F //PID 24648", "\ufffd\ufffd\ufffd\ufffd: û\ufffd\ufffd", error=True)
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    assert found[0].startswith("`taskkill /F /PID 24648` failed (")
    assert "Git Bash rewrites the Windows switch `/F` into a path (F:/)" in found[0]
    assert "(`//F`)" in found[0]


def test_a_long_switch_rewritten_under_gits_root_is_one_fact_for_both_spellings(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("is the daily task registered?")
        .bash('schtasks /Query /TN "Daily" 2>&1', GARBLED + "'E:/Git/Query'\ufffd", error=True)
        .bash(
            '"C:/Windows/System32/schtasks.exe" /Query /TN "Daily" 2>&1',
            GARBLED + "'E:/Git/Query'\ufffd",
            error=True,
        )
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    assert "`/Query` into a path (E:/Git/Query)" in found[0] and "`//Query`" in found[0]


def test_rewritten_switch_needs_the_path_the_switch_became() -> None:
    assert rewritten_switch("taskkill /F /PID 1", "... - 'F:/'") == ("F", "F:/")
    assert rewritten_switch("schtasks /Query", "x 'C:/Program Files/Git/Query'") == (
        "Query",
        "C:/Program Files/Git/Query",
    )
    assert rewritten_switch("taskkill //F /PID 1", 'ERROR: The process "1" not found.') is None
    assert rewritten_switch("ls /tmp", "ls: cannot access '/tmp/x': No such file") is None
    assert rewritten_switch("cat C:/a/b", "cat: 'C:/a/b': No such file or directory") is None


def test_python_printing_in_gbk_is_a_fact_of_the_console(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "scheduler.py", line 12, in <module>\n'
        "UnicodeEncodeError: 'gbk' codec can't encode character '\\u274c' in position 0: "
        "illegal multibyte sequence"
    )
    session = (
        ClaudeSession()
        .user("run the scheduler once")
        .bash("python scheduler.py 2>&1", "Exit code 1\n" + traceback, error=True)
        .bash("python -c \"print('\\u2705')\" 2>&1", "Exit code 1\n" + traceback, error=True)
        .bash("ls", "scheduler.py")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1  # the same code page again is the same fact
    assert "'gbk' codec can't encode" in found[0]
    assert "Python's text encoding here is GBK, not UTF-8" in found[0]
    assert "sys.stdout.reconfigure(encoding='utf-8')" in found[0]


def test_a_gbk_decode_error_behind_an_echo_pipeline_is_no_probe_answer(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("test the hook rule")
        .bash(
            'cd "E:/CC-test" && echo \'{"tool_name":"Bash"}\' | python hooks/pretooluse.py',
            "Exit code 1\nError: Malformed rule file .claude\\rule.local.md: 'gbk' codec can't "
            "decode byte 0xa3 in position 116: illegal multibyte sequence",
            error=True,
        )
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1 and "text encoding here is GBK" in found[0]


def test_windows_fact_is_silent_on_utf8_and_on_plain_errors() -> None:
    assert windows_fact("python x.py", "UnicodeDecodeError: 'utf-8' codec can't decode") == ""
    assert windows_fact("python x.py", "ValueError: bad value") == ""
    assert "CP1252" in windows_fact("python x.py", "'cp1252' codec can't encode character")


def test_the_store_alias_for_python_is_cured_by_the_installed_interpreter(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    real = '"C:/Users/Admin/AppData/Local/Programs/Python/Python312/python.exe"'
    session = (
        ClaudeSession()
        .user("run main.py")
        .bash("python main.py 2>&1", "Exit code 49", error=True)
        .bash("python -u main.py 2>&1", "Exit code 49", error=True)
        .bash(
            "where python", "C:\\Users\\Admin\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe"
        )
        .bash(f"{real} -c \"print('hello')\" 2>&1", "hello")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    assert found[0].startswith("`python main.py 2>&1` failed (Exit code 49); `python` here is")
    assert "Store alias in WindowsApps" in found[0]
    assert found[0].endswith(f"`{real} -c \"print('hello')\" 2>&1` worked instead.")


def test_store_alias_is_only_pythons_bare_exit_49() -> None:
    assert store_alias("python3", "Exit code 49")
    assert store_alias("python", "Error: Exit code 49")
    assert not store_alias("node", "Exit code 49")
    assert not store_alias("python", "Exit code 49\nTraceback (most recent call last):")
    assert not store_alias("python", "Exit code 1")


def test_a_missing_python_module_is_no_network_failure() -> None:
    assert environment_fact("python", "ModuleNotFoundError: No module named 'playwright'") == ""
    assert environment_fact("npm", "npm error getaddrinfo ENOTFOUND registry.npmjs.org") == (
        "`npm` cannot reach the network here"
    )


def test_the_same_refusal_of_two_programs_is_two_lessons_of_one_family_one(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    refused = "failed in sandbox: Operation not permitted"
    script = ".specify/scripts/bash/create-new-feature.sh"
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "start the feature"),
            ("shell", (["bash", "-lc", "git fetch --all --prune"], refused, 1)),
            ("shell", (["bash", "-lc", "git fetch --all --prune"], "", 0, True)),
            ("shell", (["bash", "-lc", f"{script} --json 'retirement'"], refused, 1)),
            ("shell", (["bash", "-lc", f"{script} --json 'retirement'"], "{}", 0, True)),
            ("shell", (["bash", "-lc", "go mod tidy"], refused, 1)),
            ("shell", (["bash", "-lc", "gofmt -w main.go"], refused, 1)),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert any(f.startswith("`git fetch --all --prune` failed") for f in found)
    assert any(f.startswith(f"`{script} --json 'retirement'` failed") for f in found)
    assert all("escalated" in f for f in found if "fetch" in f or "create-new" in f)
    assert sum(1 for f in found if "`go" in f) == 1  # go and gofmt: one family, one fact
    assert family("gofmt") == family("go") and family("create-new-feature.sh") != family("git")


def test_an_export_before_the_command_is_not_the_program() -> None:
    assert program("export GIT_INDEX_FILE=/tmp/i && git add -A") == "git"
    assert program("export A=1 B=2; cd web && npm ci") == "npm"
    assert program("export PATH") == "export"


def _current_rollout(path: Path, command: str, output: str) -> Path:
    records = [
        {
            "timestamp": "2026-03-31T01:15:04.644Z",
            "type": "session_meta",
            "payload": {"id": "019d4174-faae-78d0-a733-b80db6332893", "cwd": "/home/u/site"},
        },
        {
            "timestamp": "2026-03-31T01:15:05.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "check sprint-status.yaml"}],
            },
        },
        {
            "timestamp": "2026-03-31T01:16:20.200Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": command}),
                "call_id": "call_1",
            },
        },
        {
            "timestamp": "2026-03-31T01:16:20.290Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "call_1", "output": output},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


RUBY = (
    "ruby -e \"require 'yaml'; data = YAML.load_file('_bmad-output/implementation-artifacts/"
    "sprint-status.yaml'); puts data['development_status'].size; puts data['development_status']"
    ".select { |k,v| k.start_with?('epic-') && !k.end_with?('-retrospective') }.size; puts "
    "data['development_status'].select { |k,v| k.end_with?('-retrospective') }.size\""
)


def _headed(command: str, code: int, out: str) -> str:
    return (
        f'Command: /bin/bash -lc "{command}"\nChunk ID: aa8676\nWall time: 0.0000 seconds\n'
        f"Process exited with code {code}\nOriginal token count: 11\nOutput:\n{out}\n"
    )


def test_an_exit_code_after_a_long_command_header_is_read() -> None:
    failed = _headed(RUBY, 127, "/bin/bash: line 1: ruby: command not found")
    assert len(failed.split("Process exited")[0]) > 400  # past where other formats put it
    assert headed_exit(failed) == 127 and reports_failure(failed) and exit_status(failed) == 127
    worked = _headed(RUBY, 0, "42")
    assert headed_exit(worked) == 0 and not reports_failure(worked)
    assert headed_exit("Exit code 1\nCommand: x") is None


def test_a_missing_program_behind_a_long_command_header_is_a_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = _current_rollout(
        tmp_path / "r.jsonl", RUBY, _headed(RUBY, 127, "/bin/bash: line 1: ruby: command not found")
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert len(found) == 1
    assert "(/bin/bash: line 1: ruby: command not found)" in found[0]
    assert "`ruby` is not installed here (not on PATH)" in found[0]
