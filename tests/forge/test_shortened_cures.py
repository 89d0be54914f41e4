"""Wrong cures forge said "worked instead" (snippets of real Claude Code sessions).

A call that worked after a failure is no cure when it is the failed call with words left out
that the error does not name, after no refusal of the machine: the agent did less
(:mod:`swarmq.forge._leftout`). The cures the rule must keep are tested beside them, and the
case where the agent edited the file the failed call names before the shorter call: the edit
is the cure, and the lesson says so.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import edited_named, reason_of
from swarmq.forge._leftout import left_out, only_left_out
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _contents

_FIND = (
    'find /home/dev -type f \\( -name "requirements*.txt" -o -name "setup.py" '
    '-o -name "pyproject.toml" \\) 2>/dev/null'
)
_FIND_ERROR = (
    "/bin/bash: eval: line 1: syntax error near unexpected token `('\n"
    '/bin/bash: eval: line 1: `find /home/dev -type f \\\\( -name "requirements*.txt" '
    '-o -name "setup.py" -o -name "pyproject.toml" \\\\) 2>/dev/null < /dev/null\''
)


def test_a_search_shortened_past_its_own_syntax_error_is_no_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("look for the Python installer files")
        .bash(_FIND, _FIND_ERROR, error=True)
        .bash(
            'find /home/dev -type f -name "requirements*.txt" -o -name "setup.py" '
            '-o -name "pyproject.toml" 2>/dev/null',
            "",
        )
        .bash('find /home/dev -type f -name "Dockerfile*" -o -name "docker-compose*"', "")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("worked instead" in c for c in contents), contents


def test_a_command_run_without_its_terminal_flag_stays_a_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("update the odoo module")
        .bash(
            "docker exec -it odoo-web-1 odoo --stop-after-init -u hr_custom -d dev",
            "the input device is not a TTY.  If you are using mintty, try prefixing the command "
            "with 'winpty'",
            error=True,
        )
        .bash("docker exec odoo-web-1 odoo --stop-after-init -u hr_custom -d dev", "done")
    )
    contents = _contents(session, tmp_path, layout)
    assert any("-u hr_custom -d dev` worked instead" in c for c in contents), contents


def test_a_global_install_refused_then_run_without_g_stays_a_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("install claude code")
        .bash(
            "npm install -g @anthropic-ai/claude-code",
            "Exit code 243\nnpm error code EACCES\nnpm error syscall mkdir\n"
            "npm error path /usr/lib/node_modules/@anthropic-ai/claude-code\n"
            "npm error [Error: EACCES: permission denied, mkdir "
            "'/usr/lib/node_modules/@anthropic-ai/claude-code']",
            error=True,
        )
        .bash("npm install @anthropic-ai/claude-code", "added 3 packages in 2s")
    )
    contents = _contents(session, tmp_path, layout)
    assert any("`npm install @anthropic-ai/claude-code` worked instead" in c for c in contents), (
        contents
    )


def test_a_timed_out_install_run_in_another_folder_stays_a_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("set up the vite app")
        .bash("cd my-app && npm install", "Command timed out after 2m 0s", error=True)
        .bash("cd my-app-2 && npm install", "added 180 packages in 40s")
    )
    contents = _contents(session, tmp_path, layout)
    assert any("`cd my-app-2 && npm install` worked instead" in c for c in contents), contents


_PARSE_ERROR = (
    "Exit code 1\nAt C:\\Users\\dev\\tools\\check-env.ps1:21 char:22\n"
    '+     $ok += "\u00e2\u0153\u201c profile found at: $path"\n'
    "Unexpected token 'profile' in expression or statement."
)


def test_a_shorter_run_after_an_edit_of_the_script_keeps_the_edit_as_the_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    script = "C:\\Users\\dev\\tools\\check-env.ps1"
    session = (
        ClaudeSession()
        .user("check the environment")
        .call(
            "PowerShell",
            {"command": '& "$env:USERPROFILE\\tools\\check-env.ps1" -Detailed'},
            _PARSE_ERROR,
            error=True,
        )
        .say("The script has encoding issues with special characters. Let me fix it:")
        .call("Edit", {"file_path": script, "old_string": "\u2713", "new_string": "[OK]"}, "ok")
        .call("Edit", {"file_path": script, "old_string": "\u2717", "new_string": "[X]"}, "ok")
        .call("PowerShell", {"command": '& "$env:USERPROFILE\\tools\\check-env.ps1"'}, "all good")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "-Detailed` failed" in c
        and "The script has encoding issues with special characters" in c  # the agent's cause
        and f"after Edit wrote `{script}`" in c
        for c in contents
    ), contents
    assert not any("worked instead" in c for c in contents), contents


def test_an_edit_of_another_file_leaves_the_shorter_run_no_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("check the environment")
        .call(
            "PowerShell",
            {"command": '& "$env:USERPROFILE\\tools\\check-env.ps1" -Detailed'},
            _PARSE_ERROR,
            error=True,
        )
        .call("Edit", {"file_path": "C:\\Users\\dev\\README.md", "old_string": "a"}, "ok")
        .call("PowerShell", {"command": '& "$env:USERPROFILE\\tools\\check-env.ps1"'}, "all good")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("check-env.ps1" in c for c in contents), contents


def test_an_issue_the_agent_names_is_its_cause() -> None:
    assert reason_of("The script has encoding issues with special characters. Let me fix it:")
    assert reason_of("There is an issue with the quoting of the path in this command.")
    assert not reason_of("Let me look at the issues in this file:")  # leads into a list


def test_the_file_a_failed_command_names() -> None:
    failed = '& "$env:USERPROFILE\\tools\\check-env.ps1" -Detailed'
    assert edited_named("C:\\Users\\dev\\tools\\check-env.ps1", failed)
    assert edited_named("*** Update File: tools/check-env.ps1\n@@\n-a\n+b", failed)
    assert not edited_named("C:\\Users\\dev\\tools\\env.ps1", failed)  # a part, no name
    assert not edited_named("/tmp/x.c", "cc x.c -o x")  # too short a name to tell


def test_left_out_words() -> None:
    assert left_out("devbox_debug=1 devbox shell", "devbox shell") == ["devbox_debug=1"]
    assert left_out("a b c", "a c d") == []  # a word added: not only left out
    assert left_out("a b", "a b") == []
    assert not only_left_out("x --command y", "x y", "error: unknown flag: --command")
    assert only_left_out("x y --detailed", "x y", "unexpected token 'docs' in expression")
    assert not only_left_out(  # the error names the parameters left out, without their dash
        "get-content a.tsx -totalcount 520 -tail 280",
        "get-content a.tsx -totalcount 520",
        "the parameters totalcount and tail cannot be used together.",
    )
    assert not only_left_out(  # the inner command of a refused substitution, run first
        "docker exec $(docker ps -q) ls", "docker ps -q", "syntax error near unexpected token"
    )
    assert not only_left_out("devbox_debug=1 devbox shell", "devbox shell", "command timed out")
