"""A working call that differs from the failed one by a single change states that change as
its cure: a missing program's pipe stage dropped, a command substitution the shell refused run
as a separate call, and a relative path that failed because an earlier ``cd`` still held.

The sessions are written for these tests in the shapes of real ones (Claude Code on a Linux
server); names and paths are invented.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._sameintent import moved_workdir, split_substitution, without_stage
from swarmq.knowledge._factrule import FactKind, fact_kind
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, sequences

SUBSTITUTED = "/bin/bash: eval: line 1: syntax error near unexpected token `('"


def test_a_missing_program_piped_into_is_cured_by_the_same_command_without_it(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("is the api up?")
        .bash(
            "curl -s http://localhost:8080/health | jq .",
            "/bin/bash: line 1: jq: command not found",
            error=True,
        )
        .bash("curl -s http://localhost:8080/health", '{"status":"ok"}')
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "the same command without jq worked" in found[0]
    assert found[0].endswith("`curl -s http://localhost:8080/health` worked instead.")


def test_another_command_after_a_missing_program_is_not_said_to_drop_it() -> None:
    assert without_stage("curl -s http://x/h | jq .", "wget -qO- http://x/h", "jq") == ""
    assert without_stage("curl -s http://x/h | jq .", "curl -s http://x/h | jq -r .", "jq") == ""
    assert without_stage("jq . f.json", "cat f.json", "jq") == ""  # no pipe stage


def test_a_refused_command_substitution_is_cured_by_a_separate_call(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("check the api inside its container")
        .bash(
            "docker exec $(docker ps | grep api | awk '{print $1}') curl -s http://localhost:3000/",
            SUBSTITUTED,
            error=True,
        )
        .bash("docker ps | grep api", "3f2a9c1d0b7e   api:latest   Up 2 minutes")
        .bash("docker exec 3f2a9c1d0b7e curl -s http://localhost:3000/", "ok")
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "run the inner command as a separate call first" in found[0]
    assert found[0].endswith(
        "`docker exec 3f2a9c1d0b7e curl -s http://localhost:3000/` worked instead."
    )


def test_a_substitution_is_the_cure_only_for_the_shells_syntax_error() -> None:
    failed = "docker exec $(docker ps -q) ls"
    assert split_substitution(failed, "docker exec 3f2a ls", "Error: No such container") == ""
    assert split_substitution(failed, "docker exec $(docker ps -lq) ls", SUBSTITUTED) == ""
    assert split_substitution(failed, "podman exec 3f2a ls", SUBSTITUTED) == ""


def test_a_relative_path_after_an_earlier_cd_is_cured_by_an_absolute_path(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """Claude Code reports such a failure with no exit status; run again from an absolute
    directory it works. The lesson is the working directory, not a refusal got past by running
    the same call unchanged."""
    build = "docker build -t api:latest ./api"
    session = (
        ClaudeSession()
        .user("rebuild the api image")
        .bash("cd api && npm run build", "> tsc")
        .bash(
            build,
            'ERROR: failed to build: unable to prepare context: path "./api" not found',
            error=True,
        )
        .bash(f"cd /srv/shop && {build}", "#1 [internal] load build definition from Dockerfile")
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert found == [
        f'`{build}` failed (ERROR: failed to build: unable to prepare context: path "./api" '
        "not found); an earlier `cd` still held (the shell keeps its working directory between "
        "calls): use an absolute path, `cd /srv/shop`."
    ]
    assert fact_kind(found[0]) is FactKind.ENVIRONMENT


def test_a_relative_cd_into_where_the_shell_already_is_says_so() -> None:
    error = "/bin/bash: line 1: cd: web: No such file or directory"
    said = moved_workdir("cd web && npm run lint", "npm run lint", error)
    assert said.startswith("the shell was still in `web` from an earlier `cd`")
    assert "use an absolute path" in said


def test_a_working_directory_is_no_cure_for_other_failures_or_other_calls() -> None:
    error = "/bin/bash: line 1: cd: web: No such file or directory"
    assert moved_workdir("cd web && npm run lint", "npm run lint", "npm error code 2") == ""
    assert moved_workdir("cd web && npm run lint", "cd web && npm run lint", error) == ""
    assert moved_workdir("cd /srv/web && npm run lint", "cd /srv && npm run lint", error) == ""
    assert moved_workdir("cd web && npm run lint", "cd ../web && npm run lint", error) == ""
    assert moved_workdir("cd web && npm run lint", "npm run build", error) == ""


def test_a_program_missing_under_another_locale_is_the_same_fact(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """bash says "command not found" in the user's language; the stand-in that failed too for
    want of a module says the rest."""
    session = (
        ClaudeSession()
        .user("ejecuta la aplicación")
        .bash("python main.py", "/bin/bash: línea 1: python: orden no encontrada", error=True)
        .bash(
            "python3 main.py",
            'Traceback (most recent call last):\n  File "/home/u/app/main.py", line 1, in '
            "<module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'",
            error=True,
        )
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert found == [
        "`python main.py` failed (/bin/bash: línea 1: python: orden no encontrada); `python` is "
        "not installed here (not on PATH); `python3 main.py` failed too (ModuleNotFoundError: No "
        "module named 'yaml')."
    ]
