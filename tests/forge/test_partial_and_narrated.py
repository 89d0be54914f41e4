"""What is neither a rule nor a cure: the agent's prose on its way to its next step, and a look
taken for the fix of a failure.

Small sessions written for these tests, in the record shapes of Claude Code's Bash tool: an
explanation that ends by announcing what the agent does next, an apology, the agent's word that a
program a chain ran later is missing, and a failed call followed by a call that only looks (git
asked for its state, a file printed) before the real way round.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._chatter import ends_in_next_step
from swarmq.forge._restated import failed_programs, restates
from swarmq.forge.classifier import classify
from swarmq.forge.extract import forge_transcript
from swarmq.forge.templates import is_pasted_log, is_specification
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

_DIAGNOSIS = "The upload failed because the storage bucket rejects large files in this project."


def _contents(path: Path, layout: AgentsLayout, locks: LocalLocks) -> list[str]:
    return [c.content for c in forge_transcript(path, layout, locks).found]


def test_a_sentence_after_the_first_that_announces_the_next_step_is_told() -> None:
    assert ends_in_next_step(f"{_DIAGNOSIS} I'll split the file and upload the parts.")
    assert ends_in_next_step(f"{_DIAGNOSIS} Let me fix both.")
    assert ends_in_next_step("git 还没有配置用户信息，`gh` CLI 也没安装。让我先配置基础信息。")
    assert ends_in_next_step("別の落とし穴がいくつかあります（三つ）。順に説明します。")
    # the first sentence is is_narration's; an offer to the reader is no step
    assert not ends_in_next_step(_DIAGNOSIS)
    assert not ends_in_next_step(f"{_DIAGNOSIS} Let me know if you want the limit raised.")


def test_an_explanation_ending_in_the_agents_next_step_loses_confidence() -> None:
    alone = classify(_DIAGNOSIS)
    narrated = classify(f"{_DIAGNOSIS} I'll start an interactive upload so you can watch.")
    assert alone.accepted
    assert not narrated.accepted and narrated.confidence < alone.confidence
    # what a user writes is not the agent's next step
    said = classify(f"{_DIAGNOSIS} I'll start an interactive upload.", observed=False)
    assert said.confidence >= narrated.confidence


def test_an_apology_or_a_thought_aloud_is_no_lesson() -> None:
    finding = "the deploy failed because the token expired on the server."
    assert classify(finding[0].upper() + finding[1:]).accepted
    for opening in ("I apologize - ", "Sorry, ", "You're right, ", "Hmm, "):
        verdict = classify(opening + finding)
        assert not verdict.accepted and verdict.reason == "negative-pattern", opening


def test_a_program_a_lesson_says_is_missing_counts_as_failed() -> None:
    failed = failed_programs(
        [
            "`ls -l /tmp/x; sudo -n true` failed (/bin/bash: line 1: sudo: command not found); "
            "`sudo` is not installed here (not on PATH).",
            "`git init` failed (git : The term 'git' is not recognized …); `git` is not "
            "installed here (not on PATH).",
        ]
    )
    assert failed == {"ls", "sudo", "git"}
    assert restates("**`sudo` is not installed** in this container — verified.", failed)
    assert restates(
        "Git isn't installed on your system yet. You'll need to install it first.", failed
    )
    assert not restates("`ls` lists hidden files only with -a.", failed)


def test_the_agents_word_that_a_chained_program_is_missing_folds_into_the_tool_error(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("free some disk space")
        .bash(
            'ls -l /tmp/core.1; echo "---"; sudo -n true 2>&1',
            "Exit code 127\n-rw------- 1 root root 1 core.1\n---\n"
            "/bin/bash: line 1: sudo: command not found",
            error=True,
        )
        .say("**`sudo` is not installed** in this container — verified.")
    )
    found = forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found
    assert [c.extractor for c in found] == ["sequence"]  # the prose copy is folded away
    assert "`sudo` is not installed here" in found[0].content


def test_asking_git_its_state_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("commit the data files")
        .bash(
            "git add data/cities.json && git commit -m 'data'",
            "Exit code 128\nfatal: Unable to create '/w/.git/index.lock': Operation not permitted",
            error=True,
        )
        .bash("git ls-files data/cities.json", "data/cities.json")
        .bash("git diff --stat data/cities.json", " data/cities.json | 2 +-")
    )
    contents = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert any("index.lock" in c for c in contents)
    assert not any("worked instead" in c for c in contents)  # no look is the fix


def test_printing_the_script_that_refused_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    script = r".tools\new-feature.ps1"
    session = (
        ClaudeSession()
        .user("start the feature")
        .bash(
            f'{script} -Json "add export"',
            "Exit code 1\nError: the feature branch must be named like 001-name; "
            "run it from the repository root",
            error=True,
            tool="PowerShell",
        )
        .bash(
            f"Get-Content -Path {script} -TotalCount 40", "param([switch]$Json)", tool="PowerShell"
        )
    )
    contents = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert not any("Get-Content" in c and "worked instead" in c for c in contents)


def test_a_reader_that_failed_is_still_cured_by_the_reader_called_right(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("show me the cli")
        .bash(
            'Get-Content -Path "cli.py" -TotalCount 250 -Tail 250',
            "Get-Content : The parameters TotalCount and Tail cannot be used together. Please "
            "specify only one parameter.\n    + FullyQualifiedErrorId : TailAndHeadCannotCoexist",
            error=True,
            tool="PowerShell",
        )
        .bash('Get-Content -Path "cli.py" -TotalCount 250', "import sys", tool="PowerShell")
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert "cannot be used together" in lesson and "-TotalCount 250` worked instead" in lesson


def test_a_harness_refusing_an_idle_wait_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("wait for the job")
        .bash(
            "sleep 30 && cat /tmp/tasks/b1.output",
            "<tool_use_error>Blocked: sleep 30 followed by: cat /tmp/tasks/b1.output. To wait "
            "for a condition, use Monitor with an until-loop.</tool_use_error>",
            error=True,
        )
        .bash("df -h /", "Filesystem Size Used Avail Use% Mounted on")
        .bash("sleep 30 && cat /tmp/tasks/b1.output", "done")
    )
    assert _contents(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_a_guess_and_a_report_of_the_tasks_checks_lose_confidence() -> None:
    fact = "The issue is that the dev server keeps the old bundle in its build cache."
    assert classify(fact).accepted
    guess = "The issue is that the dev server may have cached the old bundle."
    assert not classify(guess).accepted
    seems = "`code` 명령어가 없어서 VS Code 확장 설치가 실패하는 것 같습니다."
    assert not classify(seems).accepted
    checks = "**`Board.js`** — 42 tests, all passing, including a regression test for this bug."
    assert not classify(checks).accepted
    assert classify(checks.replace("42 tests, all passing, including", "holds")).accepted


def test_which_way_the_agent_chose_for_the_task_is_its_step() -> None:
    said = 'The review skill says "Delegate to one reviewer subagent" for every change set.'
    assert not ends_in_next_step(said)
    assert ends_in_next_step(f"{said} I chose to spawn two agents in parallel.")


def test_a_product_specification_is_the_task_not_a_lesson() -> None:
    spec = (
        "I want to build a recipe planner for a small team. The application will house a "
        "pantry list and a weekly plan. The system must import recipes from web pages, because "
        "people collect them there. The dashboard should show what to buy for the week."
    )
    assert is_specification(spec)
    assert not is_specification("The system must run as root here, because the port is 80.")
    assert not is_specification("From now on, always push after each commit.")


def test_a_terminal_session_after_an_environment_name_is_pasted_output() -> None:
    pasted = (
        "(base) dev@lab-host:/data/repo$ git push -u origin main\r\n"
        "From https://example.invalid/team/repo\r\n"
        " * [new branch]      main       -> origin/main\r\n"
        "error: failed to push some refs\r\n"
    )
    assert is_pasted_log(pasted)
    assert is_pasted_log(pasted.replace("(base) ", ""))


_DUBIOUS = (
    "fatal: detected dubious ownership in repository at '/srv/app'\n"
    "To add an exception for this directory, call:\n\n"
    "\tgit config --global --add safe.directory /srv/app"
)


def test_the_command_a_failure_advised_is_its_cure_even_behind_a_pipe(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("how big is the repository?")
        .bash("git count-objects -v 2>&1 | head -20", _DUBIOUS)  # the pipe's status is head's
        .bash(
            "git config --global --add safe.directory /srv/app && git -C /srv/app count-objects",
            "count: 4440",
        )
    )
    [lesson] = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert "dubious ownership" in lesson and "safe.directory /srv/app" in lesson
    assert "worked instead" in lesson


def test_advice_to_read_the_logs_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("start the daemon")
        .bash(
            "town daemon start",
            "Exit code 1\nError: daemon failed to start (check logs with 'town daemon logs')",
            error=True,
        )
        .bash("town daemon logs", "listening on :9000")
    )
    contents = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert not any("worked instead" in c for c in contents)
    advised = (
        ClaudeSession()
        .user("start the mayor")
        .bash(
            "town mayor start",
            "Exit code 1\nError: Mayor session already running. Attach with: town mayor attach",
            error=True,
        )
        .bash("town mayor attach", "attached")
    )
    [lesson] = _contents(advised.write(tmp_path / "a.jsonl"), layout, locks)
    assert "`town mayor attach` worked instead" in lesson


def test_advice_taken_after_other_tries_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    out_of_sync = (
        "Exit code 1\nError: Database out of sync. Run 'tool sync --import-only' to fix, "
        "or read it as it is with 'tool ready --allow-stale'."
    )
    session = (
        ClaudeSession()
        .user("what is ready?")
        .bash("tool show item-7", out_of_sync, error=True)
        .bash("tool sync --import-only", "Exit code 1\nError: database is locked", error=True)
        .bash("tool ready --allow-stale", "1. item-7")
    )
    contents = _contents(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert not any("`tool ready --allow-stale` worked instead" in c for c in contents)
