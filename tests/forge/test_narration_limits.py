"""The agent's own prose is a candidate only when it states a limit of the machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._limits import states_a_limit
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import ForgeResult
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

REPORT = (
    "Root cause: `checkout.ts` validated the card before the total was known, so the fix "
    "moves the validation after `computeTotal()`."
)
"""Witnessed (it names the file of the failed test run) and a lesson to any rule, but it is
the agent's report of its own work, the family that was rarely a lesson on unseen users."""
LIMIT = "The `checkout.ts` tests cannot run here: `node` is not installed on this machine."


def forged(
    tmp_path: Path,
    layout: AgentsLayout,
    locks: LocalLocks,
    said: str,
    config: ForgeConfig | None = None,
) -> ForgeResult:
    session = (
        ClaudeSession()
        .user("the card validation is wrong at checkout")
        .bash("npm test", "FAIL src/checkout.ts: expected total 12", error=True)
        .say(said)
        .user("ok")
    )
    path = session.write(tmp_path / "s.jsonl")
    return forge_transcript(path, layout, locks, config or ForgeConfig(), force=True)


def test_the_agents_report_of_its_work_is_no_candidate(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    result = forged(tmp_path, layout, locks, REPORT)
    assert REPORT not in [c.content for c in result.found]
    assert result.rejected["narration-no-limit"] == 1


def test_the_setting_turns_the_rule_off(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    result = forged(tmp_path, layout, locks, REPORT, ForgeConfig(narration_needs_limit=False))
    assert REPORT in [c.content for c in result.found]
    assert result.rejected["narration-no-limit"] == 0


def test_the_agent_stating_what_the_machine_lacks_is_kept(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    result = forged(tmp_path, layout, locks, LIMIT)
    assert LIMIT in [c.content for c in result.found]
    assert result.rejected["narration-no-limit"] == 0


def test_the_users_prose_and_failed_calls_are_not_gated(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    rule = "Always run `make lint` before committing, because CI rejects commits that fail ruff."
    session = (
        ClaudeSession()
        .user(rule)
        .bash("rg TODO src", "bash: line 1: rg: command not found", error=True)
        .bash("grep -rn TODO src", "src/a.py:1: # TODO")
        .say("Done.")
    )
    result = forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks, force=True)
    contents = [c.content for c in result.found]
    assert rule in contents
    assert any(c.startswith("`rg TODO src` failed") for c in contents)


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("CodeRabbit CLI is not installed.", True),
        ("I can't write inside `.codex/skills` here: the sandbox refuses it (EPERM).", True),
        ("日本語変換エンジンの `ibus-mozc` が未インストールです。", True),
        ("Updated constitution.md to 1.0.0 as an initial ratification.", False),
        ("**Note**: users can also browse plugins through `/plugin`.", False),
    ],
)
def test_a_limit_is_what_the_machine_lacks_or_refuses(text: str, limit: bool) -> None:
    assert states_a_limit(text) is limit


def test_markdown_notes_are_not_gated(layout: AgentsLayout, locks: LocalLocks) -> None:
    """Notes a person may have written (no labelled set measured them): their three lessons, all
    under "## Assistant" and none stating a limit, stay candidates."""
    notes = (
        Path(__file__).parent.parent / "fixtures" / "transcripts" / "markdown" / "session-notes.md"
    )
    result = forge_transcript(notes, layout, locks, force=True)
    assert result.format == "markdown" and len(result.found) == 3
    assert all(c.role == "assistant" and not states_a_limit(c.content) for c in result.found)
    assert result.rejected["narration-no-limit"] == 0
