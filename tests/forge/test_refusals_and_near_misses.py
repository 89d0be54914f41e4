"""Rules of the 2026-12-05 sixth forge session, each checked on repositories it was not written on.

The sessions are written in the shapes of the real ones in eval/forge/sessions: a Spec-Kit
script refusing to run on ``master``, a test run behind environment assignments whose call is
longer than a lesson's summary of it, and the agent naming a failed program as a plain word
("PowerShell not available in this shell").
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._restated import restates
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import codex_old_rollout

_REFUSAL = (
    "ERROR: Not on a feature branch. Current branch: master\n"
    "Feature branches should be named like: 001-feature-name\n"
)


def test_a_project_script_refusing_to_run_keeps_what_it_expects(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "plan UC-06"),
            (
                "shell",
                (
                    ["bash", "-lc", ".specify/scripts/bash/check-prerequisites.sh --json"],
                    _REFUSAL,
                    1,
                ),
            ),
            ("assistant", "I'll wait for you to create the branch."),
        ],
    )
    contents = [c.content for c in forge_transcript(path, layout, locks).found]
    assert any(
        "Not on a feature branch" in c and "named like: 001-feature-name" in c for c in contents
    ), contents


def test_a_refusal_that_says_nothing_expected_or_is_no_scripts_stays_dropped(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "plan UC-06"),
            (
                "shell",
                (["bash", "-lc", "./scripts/render.sh docs"], "ERROR: render failed\n", 1),
            ),
            ("shell", (["bash", "-lc", "make plan"], _REFUSAL, 2)),
        ],
    )
    assert forge_transcript(path, layout, locks).found == []


def test_a_test_run_behind_environment_assignments_failing_its_tests_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    env = 'cd /Users/someone/projects/novo && POSTGRES_URL="postgresql://u:p@localhost:5432/db"'
    failing = (
        "> tsx tests/rbac.test.ts\n\n✔ owner bypasses permission checks (0.8ms)\n"
        "✔ non-members are denied (0.1ms)\n✖ role hierarchy enforces minimum role checks\n"
        "  ReferenceError: db is not defined\nℹ fail 1\n"
    )
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "run the rbac tests"),
            (
                "shell",
                (["bash", "-lc", f'{env} AUTH_SECRET="{"a" * 40}" pnpm test:rbac'], failing, 1),
            ),
            (
                "shell",
                (["bash", "-lc", f'{env} AUTH_SECRET="{"b" * 40}" pnpm test:rbac'], "ℹ pass 8", 0),
            ),
        ],
    )
    assert forge_transcript(path, layout, locks).found == []


def test_a_failed_program_named_as_a_plain_word_is_that_failure_told_again() -> None:
    failed = {"pwsh", "powershell", "rg"}
    assert restates(
        "Quick note: I couldn’t run .specify/scripts/powershell/check-prerequisites.ps1 "
        "(PowerShell not available in this shell).",
        failed,
    )
    # a name inside a path is no name; two-letter programs only in a code span
    assert not restates("The file .specify/scripts/powershell/x.ps1 is not found.", {"powershell"})
    assert not restates("rg is not installed, so I searched with grep.", failed)
    assert restates("`rg` is not installed, so I searched with grep.", failed)
