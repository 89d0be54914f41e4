"""Wrong cures forge said "worked instead" (snippets of real Claude Code sessions).

A call that worked after a failure is no cure when it is the failed call with words left out
that the error does not name, after no refusal of the machine: the agent did less
(:mod:`swarmq.forge._leftout`). The cures the rule must keep are tested beside them.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
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


def test_a_timed_out_start_run_without_its_debug_variable_is_no_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("why does devbox shell hang?")
        .bash(
            "DEVBOX_DEBUG=1 devbox shell",
            "Command timed out after 1m 0.0s time=2025-06-15T21:04:44.362-04:00 level=DEBUG "
            'source=go.jetify.com/devbox/internal/devconfig/config.go:126 msg="searching for '
            'config file (including parent directories)" path=.',
            error=True,
        )
        .bash("devbox shell", "Starting a devbox shell...")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("`devbox shell` worked instead" in c for c in contents), contents


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


def test_left_out_words() -> None:
    assert left_out("devbox_debug=1 devbox shell", "devbox shell") == ["devbox_debug=1"]
    assert left_out("a b c", "a c d") == []  # a word added: not only left out
    assert left_out("a b", "a b") == []
    assert not only_left_out("x --command y", "x y", "error: unknown flag: --command")
    assert only_left_out("x --detailed", "x", "unexpected token 'docs' in expression")
