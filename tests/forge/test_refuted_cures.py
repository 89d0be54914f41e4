"""A cure refuted by the failed command failing again the same way after it.

A call that worked after a failure is taken for its cure; when the failed command is run again
afterwards and fails as before, it was no cure, and the lesson must not say it worked.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _contents

_EACCES = (
    "Exit code 243\nnpm error code EACCES\nnpm error syscall mkdir\n"
    "npm error path /usr/lib/node_modules/left-pad\n"
    "npm error [Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/left-pad']"
)


def _npm(session: ClaudeSession) -> ClaudeSession:
    return (
        session.user("install left-pad globally")
        .bash("npm install -g left-pad", _EACCES, error=True)
        .bash("mkdir -p ~/.npm-global && npm config set prefix ~/.npm-global", "")
    )


def test_a_cure_the_failed_command_then_fails_after_is_no_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = _npm(ClaudeSession()).bash("npm install -g left-pad", _EACCES, error=True)
    contents = _contents(session, tmp_path, layout)
    assert not any("npm config set prefix ~/.npm-global` worked instead" in c for c in contents), (
        contents
    )


def test_the_later_real_cure_is_taken(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        _npm(ClaudeSession())
        .bash("npm install -g left-pad", _EACCES, error=True)
        .bash("npm install left-pad", "added 1 package in 1s")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("~/.npm-global` worked instead" in c for c in contents), contents
    assert any("`npm install left-pad` worked instead" in c for c in contents), contents


def test_a_cure_not_refuted_stands(tmp_path: Path, layout: AgentsLayout) -> None:
    contents = _contents(_npm(ClaudeSession()), tmp_path, layout)
    assert any("npm config set prefix ~/.npm-global` worked instead" in c for c in contents), (
        contents
    )
