"""A wrapper's verdict is no cause (the wrapped build's own line is), a look for a missing
program is no cure, a working call that had itself failed since is no cure of the first failure,
and a user who says the missing program is installed now states the cure."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt
from swarmq.forge._sequences import reads_only
from swarmq.forge._usercure import installed_now
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

_DEPLOY_LOG = (
    "Deploying app\n"
    "2026-03-01T10:00:01.000Z  > app@1.0.0 build\n"
    "2026-03-01T10:00:01.100Z  > bundler build\n"
    "2026-03-01T10:00:02.000Z  [31mx[39m Build failed in 1.20s\n"
    "2026-03-01T10:00:02.001Z  [31merror during build:\n"
    "2026-03-01T10:00:02.002Z  [31m[plugin:minify] minifier-x not found. You need to install it.[31m\n"
    '2026-03-01T10:00:02.100Z  Error: Command "npm run build" exited with 1\n'
    'Error: Command "npm run build" exited with 1\n'
)


def _found(path: Path, layout: AgentsLayout, locks: LocalLocks) -> list[str]:
    return [
        c.content for c in forge_transcript(path, layout, locks).found if c.extractor == "sequence"
    ]


def test_a_wrappers_verdict_gives_way_to_the_wrapped_builds_own_line() -> None:
    assert error_excerpt(_DEPLOY_LOG).startswith(
        "[plugin:minify] minifier-x not found. You need to install it."
    )


def test_a_verdict_alone_is_kept() -> None:
    assert error_excerpt('Building\nError: Command "npm run build" exited with 1') == (
        'Error: Command "npm run build" exited with 1'
    )


def test_a_package_managers_listing_only_reads() -> None:
    assert reads_only("apt list --installed | grep -i cmake")
    assert reads_only("python3 -m pip list | grep cmake")
    assert not reads_only("apt install -y cmake")


def test_a_look_for_a_missing_program_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("build it")
        .bash(
            "mkdir -p b && cd b && cmake ..",
            "/bin/bash: line 1: cmake: command not found",
            error=True,
        )
        .bash(
            "apt list --installed | grep -i cmake",
            "WARNING: apt does not have a stable CLI interface.",
        )
        .bash("ls /usr/local/bin/cmake 2>/dev/null || echo none", "none")
        .write(tmp_path / "s.jsonl")
    )
    found = _found(session, layout, locks)
    assert not any("worked instead" in f for f in found)


def test_the_user_saying_the_program_is_installed_now_is_the_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("build it")
        .bash(
            "mkdir -p b && cd b && cmake ..",
            "/bin/bash: line 1: cmake: command not found",
            error=True,
        )
        .user("try again, cmake is installed now")
        .write(tmp_path / "s.jsonl")
    )
    found = _found(session, layout, locks)
    assert len(found) == 1
    assert "cmake: command not found" in found[0]
    assert '"try again, cmake is installed now"' in found[0]


def test_a_user_asking_for_an_install_states_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("build it")
        .bash(
            "mkdir -p b && cd b && cmake ..",
            "/bin/bash: line 1: cmake: command not found",
            error=True,
        )
        .user("can you install cmake?")
        .write(tmp_path / "s.jsonl")
    )
    assert not any("the user said" in f for f in _found(session, layout, locks))


def test_a_call_that_failed_itself_since_is_no_cure_of_the_first_failure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("deploy it")
        .bash(
            "deployer --yes", 'Building\nError: Command "npm run build" exited with 1', error=True
        )
        .bash("deployer --prod", _DEPLOY_LOG, error=True)
        .bash("git commit -am 'use the default minifier' && git push", "[main 1] fix")
        .bash("deployer --prod", "Deployed")
        .write(tmp_path / "s.jsonl")
    )
    found = _found(session, layout, locks)
    assert not any(f.startswith("`deployer --yes`") for f in found)
    assert any("minifier-x not found" in f for f in found)


def test_only_a_statement_that_the_program_is_installed_is_the_users_cure() -> None:
    assert installed_now("cmake", "I installed cmake, go on")
    assert installed_now("cmake", "cmake's installed now")
    assert not installed_now("cmake", "I haven't installed cmake yet")
    assert not installed_now("cmake", "is cmake installed?")
    assert not installed_now("cmake", "python is installed now")
