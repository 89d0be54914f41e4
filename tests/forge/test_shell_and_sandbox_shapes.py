"""Rules of the 2026-12-06 forge session: what a failure's output says once its framing is read.

Small sessions written for these tests, in the record shapes of the real ones (Claude Code's
Bash tool, Codex's older ``shell`` rollouts, Codex's sandbox report): PowerShell reading a
parenthesised path component as a command, a PowerShell cmdlet sent to bash, Codex's sandbox
report round a command's own stderr, an output's closing verdict line, ``git config <key>``
asking, ``2>&1 || true`` hiding an error, a poll of a running cell, a missing program of an npm
script, and a taken port.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt
from swarmq.forge._envfacts import environment_fact, tool_rule
from swarmq.forge._sequences import SequenceMiner
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, codex_old_rollout

_NOT_A_TERM = (
    "Exit code: 1\nWall time: 1.1 seconds\nOutput:\n"
    "reports: The term 'reports' is not recognized as a name of a cmdlet, function, script "
    "file, or executable program.\nCheck the spelling of the name, or if a path was included, "
    "verify that the path is correct and try again.\n"
)


def _contents(path: Path, layout: AgentsLayout, locks: LocalLocks) -> list[str]:
    return [c.content for c in forge_transcript(path, layout, locks).found]


def test_powershell_running_a_parenthesised_path_component_says_to_quote_it(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    failed = r"Get-Content D:\work\shop\src\routes\(reports)\index.svelte"
    session = (
        ClaudeSession()
        .user("show me the reports page")
        .bash(failed, _NOT_A_TERM, error=True, tool="PowerShell")
        .bash(f'Get-Content "{failed.split(" ", 1)[1]}"', "<script>…</script>", tool="PowerShell")
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert "The term 'reports' is not recognized" in lesson
    assert "`(reports)`" in lesson and "quoting the path" in lesson and "-LiteralPath" in lesson
    assert "not installed" not in lesson  # not a missing program


def test_a_quoted_or_subexpression_name_is_no_path_component() -> None:
    error = "reports: The term 'reports' is not recognized as a name of a cmdlet"
    quoted = r'Get-Content "D:\work\src\routes\(reports)\index.svelte"'
    assert "not installed here" in environment_fact("Get-Content", error, quoted)
    called = "Write-Output $(reports)"
    assert "not installed here" in environment_fact("Write-Output", error, called)


def test_a_powershell_cmdlet_run_in_bash_is_sent_to_powershell(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("list the logs")
        .bash(
            'Select-String -Path "logs\\*.txt" -Pattern "timeout"',
            "Exit code 127\n/usr/bin/bash: line 1: Select-String: command not found",
            error=True,
        )
        .say("That shell is bash, not PowerShell.")
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert "Select-String: command not found" in lesson
    assert "PowerShell cmdlet" in lesson and "PowerShell tool" in lesson
    assert "not installed here (not on PATH)" not in lesson
    # a program that is no cmdlet stays a missing program
    plain = environment_fact("jq", "/usr/bin/bash: line 1: jq: command not found", "jq .")
    assert plain == "`jq` is not installed here (not on PATH)"


_DENIED = (
    "exec_command failed for `/bin/bash -lc 'make dev'`: CreateProcess { message: "
    '"Codex(Sandbox(Denied { output: ExecToolCallOutput { exit_code: 1, stdout: StreamOutput '
    '{ text: \\"\\", truncated_after_lines: None }, stderr: StreamOutput { text: \\"bwrap: '
    'loopback: Failed RTM_NEWADDR: Operation not permitted\\\\n\\", truncated_after_lines: None '
    '}, aggregated_output: StreamOutput { text: \\"bwrap: loopback: Failed RTM_NEWADDR: '
    'Operation not permitted\\\\n\\", truncated_after_lines: None }, duration: 0ns, timed_out: '
    'false }, network_policy_decision: None }))" }'
)


def test_a_codex_sandbox_report_is_told_by_the_commands_own_output() -> None:
    assert error_excerpt(_DENIED) == "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted"
    own = _DENIED.replace("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", "")
    assert "CreateProcess" in error_excerpt(own)  # nothing of its own: the report as before
    fact = environment_fact("make", error_excerpt(_DENIED), "make dev")
    assert fact == "`make` is refused here (sandbox or permissions)"


def test_a_codex_sandbox_report_of_a_program_error_is_that_error(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    own = _DENIED.replace(
        "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
        "fatal: not a git repository (or any of the parent directories): .git",
    )
    assert error_excerpt(own).startswith("fatal: not a git repository")
    assert "refused" not in environment_fact("git", error_excerpt(own), "git diff")


def test_the_short_last_line_of_an_output_is_its_verdict() -> None:
    sudo = (
        "sudo: a terminal is required to read the password; either use the -S option to read "
        "from standard input or configure an askpass helper\nsudo: a password is required"
    )
    assert error_excerpt(sudo).endswith("; sudo: a password is required")
    ssh = "ssh_askpass: exec(/usr/local/bin/ssh-askpass): No such file or directory\nHost key verification failed."
    assert error_excerpt(ssh) == "Host key verification failed."  # no askpass helper: noise
    # a last line that is no error, or a long log line, adds nothing
    assert error_excerpt("Error: cannot open port\nbye") == "Error: cannot open port"
    long = "error: build failed\n" + "error: see " + "x" * 90
    assert error_excerpt(long) == "error: build failed"


def test_asking_git_config_for_an_unset_key_is_no_failure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("set up git for me")
        .bash("git config --global user.email", "Error", error=True)
        .say("Your git email is not configured, so I'll set it.")
        .bash('git config --global user.email "dev@example.com"', "")
    )
    assert _contents(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_hiding_the_error_is_no_cure_but_the_step_before_the_same_call_is(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("push to the mirror")
        .bash(
            "ssh -T git@git.example.org",
            "ssh_askpass: exec(/usr/bin/ssh-askpass): No such file or directory\n"
            "Host key verification failed.",
            error=True,
        )
        .bash("ssh-keyscan -t ed25519 git.example.org >> ~/.ssh/known_hosts", "# ok")
        .bash("ssh -T git@git.example.org 2>&1 || true", "Welcome, dev!")
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert "Host key verification failed" in lesson
    assert "after `ssh-keyscan -t ed25519 git.example.org >> ~/.ssh/known_hosts`" in lesson
    assert "|| true" not in lesson


def test_a_poll_of_a_running_cell_timing_out_is_no_failure() -> None:
    output = (
        "Script failed\nWall time 0.4 seconds\nOutput:\n\nScript error:\nExit code: 124\n"
        "Wall time: 34 seconds\nOutput:\ncommand timed out after 34029 milliseconds\n"
    )
    found = {}
    for tool in ("wait", "shell_command"):
        miner = SequenceMiner()
        miner.call(tool, {"cell_id": "8", "command": "long job", "yield_time_ms": 20000})
        miner.result(output, True, 1, 1, None)
        found[tool] = list(miner.finish())
    assert found["wait"] == []
    assert len(found["shell_command"]) == 1  # a command's own timeout is kept, as before


def test_the_framing_of_codex_code_mode_is_no_error() -> None:
    bare = "Script failed\nWall time 0.4 seconds\nOutput:\n\nScript error:\nExit code: 1\nOutput:\n"
    assert error_excerpt(bare) == ""
    told = (
        bare
        + "rg: ..\\Template_*: IO error for operation on ..\\Template_*: The filename is invalid\n"
    )
    assert error_excerpt(told).startswith("rg: ..\\Template_*: IO error")


def test_an_npm_scripts_missing_program_means_the_dependencies_are_not_installed(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "run the tests"),
            (
                "shell",
                (
                    ["bash", "-lc", "npm test"],
                    "\n> app@1.0.0 test\n> jest\n\nsh: 1: jest: not found\n",
                    127,
                ),
            ),
            ("assistant", "The tests could not run."),
        ],
    )
    [lesson] = _contents(path, layout, locks)
    assert "sh: 1: jest: not found" in lesson
    assert "dependencies are missing" in lesson and "`npm install`" in lesson
    # a system program missing under a script is not a dependency
    system = environment_fact("npm", "sh: 1: python3: not found", "npm run gen")
    assert system == "`python3` is not installed here (not on PATH)"


def test_a_taken_port_is_said_whatever_got_round_it(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "start the api"),
            (
                "shell",
                (
                    ["bash", "-lc", "uvicorn app.main:app --port 8000"],
                    "INFO: Started server process\nERROR: [Errno 98] error while attempting to "
                    "bind on address ('127.0.0.1', 8000): address already in use\n",
                    1,
                ),
            ),
            ("shell", (["bash", "-lc", "uvicorn app.main:app --port 8010"], "INFO: running", 0)),
        ],
    )
    [lesson] = _contents(path, layout, locks)
    assert "port 8000 is already in use" in lesson and "ss -ltnp" in lesson
    assert "`uvicorn app.main:app --port 8010` worked instead" in lesson


def test_a_second_search_pattern_read_as_a_path_says_to_use_e(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    missing = "rg: class Ledger: No such file or directory (os error 2)\n"
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "where are the ledger classes"),
            (
                "shell",
                (["bash", "-lc", 'rg -n "def post" -n "class Ledger" app/ledger.py'], missing, 2),
            ),
            (
                "shell",
                (
                    ["bash", "-lc", 'rg -n "def close" -n "class Ledger Entry" app/ledger.py'],
                    missing.replace("class Ledger", "class Ledger Entry"),
                    2,
                ),
            ),
        ],
    )
    [lesson] = _contents(path, layout, locks)  # the same misuse twice is one lesson
    assert "a later one (`class Ledger`) is read as a path" in lesson and "-e PATTERN" in lesson


def test_a_missing_file_a_search_was_given_stays_the_answer_of_a_look(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "search the ledger"),
            (
                "shell",
                (
                    ["bash", "-lc", 'rg -n "def post" app/ledger_old.py'],
                    "rg: app/ledger_old.py: No such file or directory (os error 2)\n",
                    2,
                ),
            ),
            ("shell", (["bash", "-lc", 'rg -n "def post" app/ledger.py'], "12:def post", 0)),
        ],
    )
    assert _contents(path, layout, locks) == []


def test_a_wildcard_path_a_windows_shell_passed_on_unexpanded_says_to_use_a_glob(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    refused = (
        "Exit code: 1\nWall time: 0.3 seconds\nOutput:\n"
        "rg: lib\\Billing\\*.rb: IO error for operation on lib\\Billing\\*.rb: Die Syntax für den "
        "Dateinamen, Verzeichnisnamen oder die Datenträgerbezeichnung ist falsch. (os error 123)\n"
    )
    session = (
        ClaudeSession()
        .user("find the invoice hooks")
        .bash('rg -n "after_invoice" lib\\Billing\\*.rb', refused, error=True, tool="PowerShell")
        .bash(
            'rg -n "after_invoice" lib\\Mail\\*.rb',
            refused.replace("Billing", "Mail"),
            error=True,
            tool="PowerShell",
        )
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)  # one fact, once
    assert "(os error 123)" in lesson
    assert "unexpanded" in lesson and "-g '*.ext'" in lesson
    # a wildcard path that is simply not there is no such fact
    assert tool_rule("rg", "rg: lib/*.rb: No such file or directory (os error 2)", "rg x") == ""
