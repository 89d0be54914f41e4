"""What is not knowledge (templates, front matter, narration) and the defects found on real input."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.content import content_hash
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._pending_file import title_of
from swarmq.forge.classifier import classify
from swarmq.forge.extract import EMPTY_HASH, forge_transcript
from swarmq.forge.ledger import forged_hashes, passages_path
from swarmq.forge.templates import strip_front_matter
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import NARRATED, ClaudeSession

LESSON = "We decided to keep Redis as the broker because RabbitMQ lost acks during the `deploy.sh` restarts."
PASTED = (
    "Always run `make lint` before committing, because the CI pipeline rejects any commit that "
    "fails ruff or mypy in strict mode."
)


def contents(result: object) -> list[str]:
    return [c.content for c in result.found]  # type: ignore[attr-defined]


def test_a_passage_seen_in_another_transcript_is_a_template(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    first = ClaudeSession("s1").user(PASTED).say(LESSON).write(tmp_path / "a.jsonl")
    second = (
        ClaudeSession("s2")
        .user(PASTED)
        .say("Root cause: the cron job read `jobs.yaml` before the lock.")
        .user("ok, take the lock first then")
        .write(tmp_path / "b.jsonl")
    )
    a = forge_transcript(first, layout, locks, NARRATED)
    b = forge_transcript(second, layout, locks, NARRATED)
    assert PASTED in contents(a)  # first sight: nothing says it is pasted yet
    assert PASTED not in contents(b) and b.rejected["template"] == 1
    assert any("Root cause" in c for c in contents(b))
    again = forge_transcript(
        first, layout, locks, NARRATED, force=True
    )  # its own passages: not templates
    assert contents(again) == contents(a) and again.new == 0
    assert passages_path(layout).is_file()


def test_known_template_markers_are_skipped(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    spec_kit = (
        "## User Input\n\n```text\nadd login\n```\n\nYou **MUST** consider the user input before "
        "proceeding (if not empty).\n\n**NOTE:** Always run the script from the repo root because it "
        "resolves paths relative to `.specify/`."
    )
    result = forge_transcript(
        ClaudeSession().user(spec_kit).write(tmp_path / "s.jsonl"), layout, locks
    )
    assert result.found == [] and result.rejected["template"] == 1


def test_front_matter_is_not_a_passage(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    assert strip_front_matter("---\nname: reviewer\ntools: Read\n---\nBody.") == "Body."
    assert strip_front_matter("--- not front matter") == "--- not front matter"
    only = "---\nname: deploy\ndescription: Never deploy on Fridays, because the on-call rota is empty\n---\n"
    session = ClaudeSession().user(only).say(LESSON)
    result = forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks, NARRATED)
    assert contents(result) == [LESSON]
    assert EMPTY_HASH not in forged_hashes(layout) and content_hash(LESSON) in forged_hashes(layout)


def test_a_front_matter_only_passage_never_blocks_later_ones(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """The defect: it hashed to SHA-256(''), so every later empty-bodied passage looked seen."""
    for n in range(2):
        session = (
            ClaudeSession(f"s{n}").say("---\ntitle: notes\n---\n").say(f"{LESSON} Seen in run {n}.")
        )
        result = forge_transcript(session.write(tmp_path / f"s{n}.jsonl"), layout, locks, NARRATED)
        assert result.new == 1
    assert EMPTY_HASH not in forged_hashes(layout)


@pytest.mark.parametrize(
    "text",
    [
        "I’m switching to direct file rewrites instead of apply_patch, because the editing tool failed twice.",
        "Below is a decision-complete plan. We chose Rust for the kernel because of its type system.",
        "The kernel is close now. The remaining issue is the websocket pump; switching to split loops.",
        "I've created `docs/test_plan.md` with the decision table and the failure matrix for every worker.",
    ],
)
def test_narration_and_progress_reports_are_not_lessons(text: str) -> None:
    assert not classify(text).accepted


def test_a_list_lead_in_does_not_lower_a_rule() -> None:
    rule = "Never run the migrations against production from a laptop, because the VPN drops long sessions."
    alone, listed = classify(rule), classify(rule, lead="Notes:")
    assert alone.accepted and listed.accepted
    assert listed.confidence >= alone.confidence


@pytest.mark.parametrize(
    ("content", "title"),
    [
        (
            "1. Use the fixture loader for every test. It is faster.",
            "Use the fixture loader for every test.",
        ),
        ("- 2) Keep the broker on Redis.", "Keep the broker on Redis."),
        (
            "e.g. the pool scan reads every file. So it is slow.",
            "e.g. the pool scan reads every file.",
        ),
    ],
)
def test_titles_skip_list_markers_and_abbreviations(content: str, title: str) -> None:
    assert title_of(content) == title


def test_long_titles_are_cut_at_a_word_boundary() -> None:
    content = (
        "We decided to keep the message broker behind a feature flag instead of removing it entirely "
        "because three workers still import it"
    )
    title = title_of(content)
    assert len(title) <= 80 and title.endswith("...")
    stem = title[:-3]
    assert content.startswith(stem) and content[len(stem)] == " "  # the cut falls between words


@pytest.mark.parametrize(
    "text",
    [
        "It seems rg is not installed in this environment, so grep -R is the way to search here.",
        "The sandbox blocks outbound network access, so `cargo build` cannot fetch crates from crates.io.",
    ],
)
def test_a_fact_about_the_machine_stated_in_prose_is_a_learning(text: str) -> None:
    verdict = classify(text)
    assert verdict.accepted and verdict.type is not None and verdict.type.value == "learning"


def test_a_pasted_error_in_a_users_prompt_is_not_a_machine_fact() -> None:
    pasted = "The build says zsh: command not found: cargo again, because the PATH is wrong in CI."
    assert classify(pasted).accepted
    assert not classify(pasted, observed=False).accepted


def test_a_markdown_table_row_is_not_a_lesson() -> None:
    row = "| **Functional Scope & Behavior** | **Resolved** | Core requirements clarified, see docs/spec.md |"
    assert not classify(row).accepted


def test_a_post_mortem_source_line_is_not_a_lesson() -> None:
    assert not classify(
        "Post-mortem for mission m-42: the billing worker outage on 2026-03-02"
    ).accepted
    assert classify(
        "Root cause: the billing worker read `jobs.yaml` before the lock was taken."
    ).accepted


def test_a_decision_the_agent_confirms_is_kept_without_the_next_question(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("Persist it as a JSON dump written by the kernel; the client stays ephemeral.")
        .say(
            "Got it: JSON dump persisted by the kernel (server side), client stays ephemeral. Question 4: "
            "should stdin inputs be merged or interleaved? What do you want?"
        )
        .say("Got it, thanks.")
    )
    found = contents(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks, NARRATED))
    assert found == ["JSON dump persisted by the kernel (server side), client stays ephemeral."]
