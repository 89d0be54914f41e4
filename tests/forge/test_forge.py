"""Forging transcripts into AgentOps pending files: format, spans, idempotency, LLM pass."""

from __future__ import annotations

import shutil
from pathlib import Path

from swarmq.flywheel._pending import file_date, parse_learning_blocks
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import forged_hashes
from swarmq.storage.locking import LocalLocks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude-code" / "session-v2.0.jsonl"
EVERY = ForgeConfig(max_narrated=0, narration_needs_witness=False, narration_needs_limit=False)
"""The mechanics tests count every lesson of the fixture, which narrates more than the cap, and
more than its one failed call witnesses."""


def test_forge_writes_an_agentops_pending_file(layout: AgentsLayout, locks: LocalLocks) -> None:
    result = forge_transcript(CLAUDE, layout, locks, EVERY)
    assert result.status == "forged" and result.format == "claude-code"
    assert result.new == result.candidates == 7
    assert result.report["unknown_types"] == {"x-experimental-telemetry": 1}
    assert result.rejected["no-signal"] >= 5
    pending = Path(str(result.pending_file))
    assert (
        pending.parent == layout.pending
        and pending.name[10:17] == "-forge-"
        and len(pending.name) == 30
    )
    text = pending.read_text(encoding="utf-8")
    blocks = parse_learning_blocks(text)
    assert len(blocks) == 7
    categories = [b.category for b in blocks]
    assert categories.count("decision") == 3 and {
        "failure",
        "solution",
        "learning",
        "reference",
    } <= set(categories)
    root = next(b for b in blocks if b.category == "failure")
    assert root.fields["session"] == "7d3f2c1a-5b6e-4f80-9a1b-2c3d4e5f6a7b"
    assert root.fields["transcript"] == str(CLAUDE.resolve())
    assert root.fields["message"] == "6" and root.fields["line"] == "8"
    assert root.fields["timestamp"] == "2026-03-02T09:14:12.880Z"
    assert root.fields["class"] == "architecture" and root.confidence in ("medium", "high")
    assert root.id.startswith("f-") and "## What We Learned" in root.body
    assert file_date(text, pending).year >= 2026  # forged_at front matter
    assert len(forged_hashes(layout)) == 7


def test_reforging_adds_nothing(layout: AgentsLayout, locks: LocalLocks, tmp_path: Path) -> None:
    first = forge_transcript(CLAUDE, layout, locks, EVERY, key="mission-42")
    again = forge_transcript(CLAUDE, layout, locks, EVERY, key="mission-42")
    assert again.status == "unchanged" and again.messages == 0  # the ledger: not even read
    forced = forge_transcript(CLAUDE, layout, locks, EVERY, key="mission-42", force=True)
    assert forced.status == "nothing-new" and forced.new == 0 and forced.duplicates == 7
    copy = tmp_path / "elsewhere.jsonl"
    shutil.copy(CLAUDE, copy)
    moved = forge_transcript(copy, layout, locks, EVERY)  # same content under another path and key
    assert moved.status == "nothing-new" and moved.new == 0
    assert list(layout.pending.iterdir()) == [Path(str(first.pending_file))]


def test_one_new_message_forges_only_the_new_candidate(
    layout: AgentsLayout, locks: LocalLocks, tmp_path: Path
) -> None:
    transcript = tmp_path / "live.jsonl"
    shutil.copy(CLAUDE, transcript)
    forge_transcript(transcript, layout, locks, EVERY)
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(
            '{"type":"user","sessionId":"7d3f2c1a-5b6e-4f80-9a1b-2c3d4e5f6a7b","uuid":"z",'
            '"message":{"role":"user","content":"Lesson learned: pin `redis-py` below 6 in '
            'pyproject.toml, because 6.0 changed the default protocol."}}\n'
        )
    grown = forge_transcript(transcript, layout, locks, EVERY)
    assert grown.status == "forged" and grown.new == 1 and grown.duplicates == 7
    assert grown.new_candidates[0]["type"] == "learning"


def test_truncated_and_other_formats(layout: AgentsLayout, locks: LocalLocks) -> None:
    torn = forge_transcript(FIXTURES / "claude-code" / "truncated.jsonl", layout, locks, EVERY)
    assert torn.new == 1 and torn.report["truncated_last_line"]
    legacy = forge_transcript(
        FIXTURES / "codex" / "rollout-legacy-2025-08-21.jsonl", layout, locks, EVERY
    )
    assert legacy.format == "codex-rollout" and legacy.new == 1
    notes = forge_transcript(FIXTURES / "markdown" / "session-notes.md", layout, locks)
    assert notes.format == "markdown" and notes.new == 3


def test_config_switches(layout: AgentsLayout, locks: LocalLocks) -> None:
    no_side = forge_transcript(
        CLAUDE,
        layout,
        locks,
        ForgeConfig(
            include_sidechains=False,
            max_narrated=0,
            narration_needs_witness=False,
            narration_needs_limit=False,
        ),
    )
    assert no_side.new == 6
    strict = forge_transcript(
        CLAUDE,
        AgentsLayout(layout.root.parent / "b"),
        locks,
        ForgeConfig(min_confidence=0.8, narration_needs_witness=False, narration_needs_limit=False),
    )
    assert (
        strict.new == 3
    )  # the two with a consequence (", so the broker redelivered …") and "since"


NARRATION = (
    "The fix is to always close the socket in a finally block, since the error path skipped it.",
    "Lesson learned: never call the billing API from the test suite because it charges real cards.",
    "The real fix: the migration must run before the seed script, otherwise the table is missing.",
    "Important: the staging database must never be reset without a backup because it holds "
    "customer data.",
    "Note that the CI runner needs Node 20, since the lockfile uses workspaces.",
)


def test_a_session_narrating_many_lessons_keeps_its_most_confident_few(
    layout: AgentsLayout, locks: LocalLocks, tmp_path: Path
) -> None:
    from tests.forge.sessions import NARRATED, ClaudeSession

    session = ClaudeSession().user("debug the service")
    for line in NARRATION:
        session = session.say(line)
    path = session.write(tmp_path / "s.jsonl")
    capped = forge_transcript(path, layout, locks, NARRATED, force=True)
    assert [c.content for c in capped.found] == [NARRATION[1], NARRATION[3], NARRATION[4]]
    assert capped.rejected["narration"] == 2
    every = forge_transcript(path, layout, locks, EVERY, force=True)
    assert [c.content for c in every.found] == list(NARRATION)
