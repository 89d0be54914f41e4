"""The agent's prose is a lesson only when a failed call of the session witnessed what it names
(swarmq.forge._witness)."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._witness import FailureWitness, names
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import ForgeResult
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import NARRATED, ClaudeSession

DIAGNOSIS = "The root cause is that `libvips.so.42` is missing on this host, so sharp cannot load."
NARRATION = (
    "Important: the `PaymentForm` component must validate the card number before submitting, "
    "because the backend rejects partial numbers."
)
WITNESS_ONLY = ForgeConfig(narration_needs_limit=False)
"""The witness rule alone (the limit rule, ``forge._limits``, has its own tests)."""
NODE = "Node.js is not installed on this machine, so the MCP server cannot be built here."


def forged(
    session: ClaudeSession, tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> ForgeResult:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return forge_transcript(
        session.write(tmp_path / "s.jsonl"), layout, locks, WITNESS_ONLY, force=True
    )


def test_names_are_code_spans_and_identifier_shaped_words() -> None:
    got = names("Use `npm ci` with my_var, python3, camelCase, NODE_ENV and src/app.ts; the fix.")
    assert got == {"npm ci", "my_var", "python3", "camelcase", "node_env", "src/app.ts"}
    assert names("The fix is to always close the socket in a finally block.") == set()


def test_the_witness_stays_bounded() -> None:
    witness = FailureWitness()
    for n in range(2_000):
        witness.saw("x" * 2_500 + f" error{n}", "make build", "make")
    assert witness.chars <= 512_000
    assert witness.names_any("`error1999` again") and not witness.names_any("`error0` again")
    assert witness.programs == {"make"}


def test_narration_that_names_nothing_failed_is_dropped(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("add card validation to the checkout")
        .bash("npm test", "Tests: 12 passed, 12 total")
        .say(NARRATION)
    )
    result = forged(session, tmp_path, layout, locks)
    assert [c.content for c in result.found] == []
    assert result.rejected["unwitnessed"] == 1
    kept = forge_transcript(tmp_path / "s.jsonl", layout, locks, NARRATED, force=True)
    assert [c.content for c in kept.found] == [NARRATION]  # the setting turns the rule off


def test_a_diagnosis_of_what_failed_before_it_is_kept(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("the thumbnails are broken")
        .bash(
            "node scripts/thumbs.js",
            "Error: libvips.so.42: cannot open shared object file: No such file or directory",
            error=True,
        )
        .say(DIAGNOSIS)
        .user("ok, install it then")
    )
    assert DIAGNOSIS in [c.content for c in forged(session, tmp_path, layout, locks).found]


def test_the_witness_must_come_before_the_prose(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("the thumbnails are broken")
        .say(DIAGNOSIS)
        .user("ok, check it")
        .bash("ls /usr/lib/libvips.so.42", "ls: cannot access: No such file", error=True)
    )
    result = forged(session, tmp_path, layout, locks)
    assert DIAGNOSIS not in [c.content for c in result.found]
    assert result.rejected["unwitnessed"] == 1


def test_prose_naming_the_program_that_failed_is_kept(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("build the MCP server")
        .bash("node --version", "/bin/bash: line 1: node: command not found", error=True)
        .say(NODE)
    )
    assert NODE in [c.content for c in forged(session, tmp_path, layout, locks).found]


def test_a_chat_without_tools_keeps_its_prose(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = ClaudeSession().user("how should the card form validate?").say(NARRATION)
    assert [c.content for c in forged(session, tmp_path, layout, locks).found] == [NARRATION]
