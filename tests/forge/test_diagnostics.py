"""Round 4 (each change moved at least two repositories): a compiler's or library's diagnostic
that carries a documented error code and names its own remedy is a rule of the tool, kept even
from a log the user pasted (an exception at the end of a traceback, a warning, or an error without
a code or a remedy is not); a bare "Avoid …"/"Don't …" is advice for now, from the agent as from
the user. Examples are written for these tests, not copied from the labelled sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.classifier import classify
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.forge.templates import coded_diagnostics, is_pasted_log
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

_RUST_LOG = (
    "   Compiling demo v0.1.0 (/home/me/demo)\n"
    "error[E0658]: use of unstable library feature `strict_provenance`, which requires a nightly compiler\n"
    "  --> src/lib.rs:4:13\n"
    "   |\n"
    "4  |     let a = p.addr();\n"
    "   |             ^^^^\n"
    "error: could not compile `demo` (lib) due to 1 previous error\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_RUST_LOG, "error[E0658]: use of unstable library feature"),
        (
            "src/list.ts(12,9): error TS2551: Property 'lenght' does not exist on type 'string[]'. "
            "Did you mean 'length'?",
            "error TS2551: Property 'lenght'",
        ),
        (
            "[Chart Kit]: A dataset without a key is redrawn on every update. Please use a stable key, "
            "see https://chartkit.example/errors/042",
            "[Chart Kit]: A dataset without a key",
        ),
    ],
)
def test_a_coded_diagnostic_naming_its_remedy_is_kept(text: str, expected: str) -> None:
    assert [line[: len(expected)] for line in coded_diagnostics(text)] == [expected]


@pytest.mark.parametrize(
    "text",
    [
        # an exception at the end of a traceback: what one program did, no documented code
        'Traceback (most recent call last):\n  File "run.py", line 3, in <module>\n'
        "ValueError: the encoder requires the keyword argument `mask` to be passed",
        # a coded error without a remedy
        "error[E0425]: cannot find value `totl` in this scope\n  --> src/main.rs:9:5",
        # a warning, even with advice
        "warning: unused `Result` that must be used\n  --> src/db.rs:41:9",
        # a remedy without a code
        "[Chart Kit]: Please use a stable key for every dataset you pass to the chart component.",
    ],
)
def test_other_errors_are_not_rules_of_the_tool(text: str) -> None:
    assert coded_diagnostics(text) == []


def test_the_same_diagnostic_twice_is_one() -> None:
    assert len(coded_diagnostics(_RUST_LOG + "\n" + _RUST_LOG)) == 1


def test_a_diagnostic_in_a_pasted_log_becomes_a_candidate(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    message = f"the build broke again:\n{_RUST_LOG}"
    assert is_pasted_log(message)  # the rest of the message is still not the user's lesson
    session = (
        ClaudeSession("s1").user(message).say("Switching the toolchain to nightly for this crate.")
    )
    found = forge_transcript(session.write(tmp_path / "a.jsonl"), layout, locks).found
    diagnostics = [c for c in found if c.content.startswith("error[E0658]")]
    assert len(diagnostics) == 1
    assert diagnostics[0].role == "user" and diagnostics[0].type == "solution"
    assert diagnostics[0].confidence == pytest.approx(0.7)
    assert (
        forge_transcript(tmp_path / "a.jsonl", layout, locks).found == []
    )  # re-forging adds nothing


def test_a_stricter_threshold_drops_the_diagnostic(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = ClaudeSession("s1").user(f"look at this:\n{_RUST_LOG}")
    config = ForgeConfig(min_confidence=0.8)
    found = forge_transcript(session.write(tmp_path / "a.jsonl"), layout, locks, config).found
    assert not any(c.content.startswith("error[E0658]") for c in found)


@pytest.mark.parametrize("observed", [True, False])
def test_a_bare_imperative_is_advice_whoever_gives_it(observed: bool) -> None:
    """Round 4: "Avoid …"/"Don't …" without a reason is advice for the task at hand, from the
    agent as from the user; with its reason it is a rule."""
    assert not classify(
        "Avoid restarting the broker while a deploy is still draining.", observed=observed
    ).accepted
    assert not classify("Don't edit the generated client by hand.", observed=observed).accepted
    assert classify(
        "Don't edit the generated client by hand, because the next codegen run overwrites it.",
        observed=observed,
    ).accepted
