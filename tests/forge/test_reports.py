"""What was done is not what was learned: change reports, quoted cues, notes carried by requests,
one session recorded twice, and failures about the machine fixed after some investigation."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._reports import is_change_report, standing_note
from swarmq.forge.classifier import classify
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import passages_path
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

RULE = (
    "Note that the staging database is read-only after 18:00, so migrations must run before then."
)


@pytest.mark.parametrize(
    "text",
    [
        "**Fix:** move the `department_form` view into `ticket_system`, where those fields live.",
        "Added a `--dry-run` flag to `deploy.sh` and updated the fix in `README.md`.",
        "I moved the retry loop into `worker.py` as the fix for the flaky test.",
    ],
)
def test_a_report_of_an_edit_just_made_is_not_a_lesson(text: str) -> None:
    assert is_change_report(text)
    verdict = classify(text)
    assert not verdict.accepted and verdict.confidence < 0.6


@pytest.mark.parametrize(
    "text",
    [
        "Fixed by deriving `visibility_timeout` from the longest time limit, so a running task is never redelivered.",
        "**Fix:** move the view into `ticket_system` because Odoo loads a module's views before its dependants'.",
        "Root cause: the worker crashed because `ulimit -n` is 256 on the CI runners.",
    ],
)
def test_a_fix_that_says_why_or_a_cause_stays(text: str) -> None:
    assert classify(text).accepted


def test_a_list_under_a_changes_or_plan_lead_in_is_a_report() -> None:
    item = "Switched the cache to Redis to avoid the stale reads seen in `api.py`."
    assert is_change_report("Dropped the old `cache.py` module.", "Changes:")
    assert not is_change_report(item)  # says what for
    assert is_change_report("Use canvas for the graph layer", "Plan:")


def test_cue_words_in_quotes_or_parentheses_are_mentioned_not_used() -> None:
    assert not classify(
        'When I mention "I learned that...", ask if I want to capture it in `learning/`.'
    ).accepted
    assert not classify(
        "`learning/` - my knowledge base (best practices, lessons learned, ideas)"
    ).accepted
    assert classify(
        "Lesson learned: `pip install` inside the container needs the mirror at `pypi.tuna`."
    ).accepted


def test_a_request_carrying_a_note_is_cut_to_the_note() -> None:
    request = (
        "add these findings to docs/hints.md, note that the ISS simulator crashes without reason on x86, "
        "so use the chip backend for per-layer accuracy"
    )
    assert standing_note(request).startswith("note that the ISS simulator crashes")
    verdict = classify(request, observed=False)
    assert verdict.accepted and verdict.text.startswith("note that the ISS simulator")
    assert not classify(
        "add the script. Note that, use mounts to keep data out of the container", observed=False
    ).accepted  # another instruction for the task
    assert not classify(
        "add the script, and note that the next step will be to run the simulator", observed=False
    ).accepted  # a plan
    assert not classify("add the script to scripts/ and commit it", observed=False).accepted


def test_one_session_recorded_twice_is_not_a_template(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """Codex writes each prompt to the session's rollout and to history.jsonl: same session id."""
    rollout = ClaudeSession("same").user(RULE).write(tmp_path / "rollout.jsonl")
    history = ClaudeSession("same").user(RULE).write(tmp_path / "history.jsonl")
    other = ClaudeSession("other").user(RULE).write(tmp_path / "other.jsonl")
    assert [c.content for c in forge_transcript(rollout, layout, locks).found] == [RULE]
    again = forge_transcript(history, layout, locks)
    assert [c.content for c in again.found] == [RULE] and again.new == 0  # found, already known
    pasted = forge_transcript(other, layout, locks)
    assert pasted.found == [] and pasted.rejected["template"] == 1  # another session: pasted
    assert '"s":' in passages_path(layout).read_text(encoding="utf-8")


def test_fingerprints_without_a_session_still_mark_templates(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """Lines written before sessions were recorded have no ``s``: seen elsewhere is a template."""
    first = ClaudeSession("same").user(RULE).write(tmp_path / "a.jsonl")
    forge_transcript(first, layout, locks)
    path = passages_path(layout)
    path.write_text(
        "".join(line.split(',"s"')[0] + "}\n" for line in path.read_text().splitlines()),
        encoding="utf-8",
    )
    result = forge_transcript(
        ClaudeSession("same").user(RULE).write(tmp_path / "b.jsonl"), layout, locks
    )
    assert result.found == [] and result.rejected["template"] == 1
