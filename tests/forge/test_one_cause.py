"""Issue 24, forge precision: a long error is quoted by the line that names its cause, and the
failures of one session that share a cause are one lesson, not one per failing call."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt
from swarmq.forge._samecause import Failure, groups, quoted_reason, same_cause
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, codex_old_rollout, sequences

_RETRIES = "".join(
    f"WARNING: Retrying (Retry(total={n}, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
    "HTTPSConnection object at 0x7f00aa>: Failed to establish a new connection: [Errno -3] "
    "Temporary failure in name resolution')': /simple/requests/\n"
    for n in (2, 1, 0)
)


def test_retry_warnings_give_way_to_the_resolver_error_they_carry() -> None:
    output = (
        _RETRIES + "ERROR: Could not find a version that satisfies the requirement requests (from "
        "versions: none)\nERROR: No matching distribution found for requests\n"
    )
    excerpt = error_excerpt(output)
    assert "Temporary failure in name resolution" in excerpt
    assert "Retry(total" not in excerpt


def test_a_sandboxed_retry_warning_gives_way_to_its_cause() -> None:
    excerpt = error_excerpt("failed in sandbox: " + _RETRIES + "ERROR: no distribution\n")
    assert excerpt.startswith("failed in sandbox: …")
    assert "Temporary failure in name resolution" in excerpt


def test_a_sandboxed_traceback_is_quoted_by_its_root_exception() -> None:
    output = (
        "failed in sandbox: Traceback (most recent call last):\n"
        '  File "/srv/tool/render.py", line 12, in load\n'
        "    import yaml\n"
        "ModuleNotFoundError: No module named 'yaml'\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/tool/render.py", line 40, in <module>\n'
        "SystemExit: render.py cannot read its templates without PyYAML; install it first, then "
        "run this again\n"
    )
    assert "No module named 'yaml'" in error_excerpt(output)


def test_a_fatal_line_beats_the_errors_a_program_went_on_past() -> None:
    output = (
        "failed in sandbox: Error: can't open log file /var/log/tiled/tiled.log! Using stderr.\n"
        "Error reading configuration file '/etc/tiled/extra.conf'\n"
        "Fatal error [server.c:88]: Can't bind local socket\n"
        "shutting down\n"
    )
    excerpt = error_excerpt(output)
    assert excerpt == "failed in sandbox: Fatal error [server.c:88]: Can't bind local socket"


_OFFLINE = (
    "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
    "HTTPSConnection object at 0x7f00bb>: Failed to establish a new connection: [Errno -3] "
    "Temporary failure in name resolution')': /simple/yamlette/\n"
    "ERROR: Could not find a version that satisfies the requirement yamlette (from versions: "
    "none)\nERROR: No matching distribution found for yamlette\n"
)


def test_a_module_missing_and_its_install_refused_by_the_network_are_one_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "offline.jsonl",
        [
            ("user", "render the report"),
            (
                "shell",
                (
                    ["python3", "render.py", "--out", "report.html"],
                    'failed in sandbox: Traceback (most recent call last):\n  File "render.py", '
                    "line 2\n"
                    "ModuleNotFoundError: No module named 'yamlette'\n",
                    1,
                ),
            ),
            ("shell", (["pip", "install", "yamlette"], "failed in sandbox: " + _OFFLINE, 1)),
        ],
    )
    found = sequences(path, layout, locks)
    assert len(found) == 1, found
    assert "No module named 'yamlette'" in found[0]
    assert "Temporary failure in name resolution" in found[0]
    assert found[0].startswith("`pip install yamlette` failed")


def test_a_daemon_refused_under_its_client_and_by_hand_is_one_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "daemon.jsonl",
        [
            ("user", "read the text aloud"),
            (
                "shell",
                (
                    ["tiled-say", "hello"],
                    "failed in sandbox: Error: Can't connect to unix socket /run/user/1000/tiled-server/tiled.sock: "
                    "Operation not permitted.\n",
                    1,
                ),
            ),
            (
                "shell",
                (
                    ["/bin/sh", "-c", "RUNTIME=/tmp/t tiled-server --daemon"],
                    "failed in sandbox: Fatal error [main.c:12]: Can't bind local socket\n",
                    1,
                ),
            ),
        ],
    )
    found = sequences(path, layout, locks)
    assert len(found) == 1, found
    assert "tiled.sock" in found[0]
    assert "Can't bind local socket" in found[0]


def test_a_program_missing_and_an_installer_that_needs_it_are_one_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("install the editor")
        .bash(
            "curl -fsSL https://example.org/get-editor.sh | bash",
            "Checking requirements...\nyq is required but not installed. Install yq first.",
            error=True,
        )
        .bash("yq --version", "/bin/bash: line 1: yq: command not found", error=True)
        .say("yq is missing here, so the installer cannot run.")
    )
    found = sequences(session.write(tmp_path / "yq.jsonl"), layout, locks)
    assert len(found) == 1, found
    assert "yq is required but not installed" in found[0]
    assert "yq: command not found" in found[0]


def test_an_install_refused_for_a_reason_of_its_own_stays_its_own_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("build it")
        .bash("./build.sh", "./build.sh: line 3: ninja: command not found", error=True)
        .bash(
            "sudo apt-get install -y ninja-build",
            "sudo: a terminal is required to read the password; either use the -S option to "
            "read from standard input or configure an askpass helper\n"
            "sudo: a password is required",
            error=True,
        )
    )
    found = sequences(session.write(tmp_path / "ninja.jsonl"), layout, locks)
    assert any("ninja: command not found" in f for f in found)
    assert any("a terminal is required" in f for f in found)
    assert not any("same cause" in f for f in found)


def test_unrelated_failures_of_one_session_are_not_joined() -> None:
    git = Failure("git push", "fatal: Authentication failed for 'https://example.org/r.git'", False)
    tests = Failure("pytest -q", "ERROR: file or directory not found: tests/unit", False)
    assert not same_cause(git, tests)
    assert groups([git, tests]) == []


def test_the_agents_sentence_a_failure_quotes_is_that_failure_again() -> None:
    reason = "The sandbox has no network, so the package cannot be installed here."
    assert quoted_reason(reason + " I will write the script instead.", [reason])
    assert not quoted_reason("The user wants the report in French.", [reason])


def test_a_cure_in_two_calls_of_one_command_names_both(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("commit the notes")
        .bash(
            'git commit -m "notes"',
            "Author identity unknown\n\n*** Please tell me who you are.\n\nfatal: unable to "
            "auto-detect email address (got 'ana@box.(none)')",
            error=True,
        )
        .bash('git config --global user.name "Ana"', "")
        .bash('git config --global user.email "ana@example.org"', "")
        .bash('git commit -m "notes"', "[main (root-commit) 1a2b3c4] notes\n 1 file changed")
    )
    found = sequences(session.write(tmp_path / "identity.jsonl"), layout, locks)
    assert len(found) == 1, found
    assert "git config --global user.name" in found[0]
    assert "git config --global user.email" in found[0]


def test_the_lock_a_killed_call_left_is_named_with_the_kill(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("put the project under git")
        .bash("git init", "Initialized empty Git repository in /home/u/proj/.git/")
        .bash(
            "git add -A",
            "Command timed out after 2m 0.0s warning: adding embedded git repository: vendor/lib",
            error=True,
        )
        .call("Write", {"file_path": "/home/u/proj/.gitignore", "content": "vendor/\n"}, "ok")
        .bash(
            "git add -A",
            "fatal: Unable to create '/home/u/proj/.git/index.lock': File exists.\n\nAnother git "
            "process seems to be running in this repository.",
            error=True,
        )
    )
    found = sequences(session.write(tmp_path / "lock.jsonl"), layout, locks)
    assert len(found) == 1, found
    assert "timed out" in found[0]
    assert "index.lock': File exists" in found[0]


def test_a_lookup_a_program_did_not_find_is_no_missing_thing_to_share() -> None:
    first = Failure("gh release view v9", "release: not found", False)
    second = Failure("helm status web", "Error: release: not found", False)
    assert not same_cause(first, second)
    shell = Failure("jq . out.json", "sh: 1: jq: not found", False)
    installer = Failure("./install.sh", "jq is required but not installed", False)
    assert same_cause(shell, installer)


def test_a_changed_cd_after_the_cd_s_own_refusal_is_no_rerun(tmp_path: Path) -> None:
    """Git Bash drops a Windows path's backslashes, and Claude Code refuses a ``cd`` out of the
    allowed folders: the next call with another ``cd`` and the same steps is the way round, not
    the refused call run again unchanged."""
    session = (
        ClaudeSession()
        .user("unzip the archive in my downloads")
        .bash(
            r"cd C:\Users\me\Downloads && unzip -q tool.zip",
            "/usr/bin/bash: line 1: cd: C:UsersmeDownloads: No such file or directory",
            error=True,
        )
        .bash(
            'cd "/c/Users/me/Downloads" && unzip -q tool.zip',
            "cd to '/c/Users/me/Downloads' was blocked. For security, Claude Code may only "
            "change directories to child directories of the allowed working directories for "
            "this session (including 'C:\\Users\\me').",
            error=True,
        )
        .bash("cd Downloads && unzip -q tool.zip", "")
        .write(tmp_path / "s.jsonl")
    )
    found = sequences(session, AgentsLayout(tmp_path / ".agents"), LocalLocks(tmp_path / "l"))
    assert not [text for text in found if "run again unchanged" in text], found


def test_a_look_whose_own_program_is_missing_is_a_fact_of_the_machine(tmp_path: Path) -> None:
    """``ps aux | head -5`` in a slim container prints ``ps: command not found`` (with status 0:
    the pipe's is ``head``'s): what the look asked went unanswered, and that ``ps`` is not
    installed is what the next session needs."""
    session = (
        ClaudeSession()
        .user("check the environment")
        .bash("ps aux | head -5", "/bin/bash: line 1: ps: command not found")
        .bash("ls", "src package.json")
        .write(tmp_path / "s.jsonl")
    )
    found = sequences(session, AgentsLayout(tmp_path / ".agents"), LocalLocks(tmp_path / "l"))
    assert [text for text in found if "`ps` is not installed here" in text], found
