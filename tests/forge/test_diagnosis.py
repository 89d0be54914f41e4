"""A diagnosis is held until what follows bears it out (swarmq.forge._diagnosis)."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._diagnosis import disowns, is_diagnosis
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import NARRATED, ClaudeSession

FLOAT = (
    "The root cause is that the total column sums rounded cents in floating point, so the "
    "formula chain drifts by two cents."
)
DATA = (
    "The root cause is that the pasted values in column AF were exported with truncated cents, "
    "so every total built on them is off."
)


def lessons(session: ClaudeSession, tmp_path: Path, layout: AgentsLayout, locks: LocalLocks) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = session.write(tmp_path / "s.jsonl")
    found = forge_transcript(path, layout, locks, NARRATED, force=True).found
    return "\n".join(c.content for c in found)


def test_diagnosis_and_disowning_are_recognised() -> None:
    assert is_diagnosis(FLOAT) and is_diagnosis(DATA)
    assert not is_diagnosis("I updated the formula in AA50 to use ROUND.")
    assert not is_diagnosis(FLOAT + " Fixed by summing integer cents.")  # a report, not a guess
    assert disowns("I changed it to round but that didn't correct it")
    assert disowns("[Request interrupted by user for tool use]")
    assert not disowns("great, now add the export button")


def test_a_diagnosis_the_user_goes_on_from_is_kept(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = ClaudeSession().user("why is the total two cents off?").say(FLOAT)
    session.user("ok, now make the export keep two decimals")
    assert "floating point" in lessons(session, tmp_path, layout, locks)


def test_a_diagnosis_the_user_disowns_or_a_later_one_replaces_is_dropped(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    disowned = ClaudeSession().user("why is the total two cents off?").say(FLOAT)
    disowned.user("I changed it to round but that didn't correct it")
    assert "floating point" not in lessons(disowned, tmp_path / "a", layout, locks)

    replaced = ClaudeSession().user("why is the total two cents off?").say(FLOAT).say(DATA)
    replaced.user("thanks, fix the import then")
    found = lessons(replaced, tmp_path / "b", layout, locks)
    assert "floating point" not in found and "pasted values" in found


def test_a_diagnosis_at_the_end_is_kept_only_if_the_agent_acted_on_it(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    idle = ClaudeSession().user("why is the total two cents off?").say(FLOAT)
    assert "floating point" not in lessons(idle, tmp_path / "a", layout, locks)

    acted = ClaudeSession().user("why is the total two cents off?").say(FLOAT)
    acted.bash("totals.py", "The file totals.py has been updated.", tool="Edit")
    assert "floating point" in lessons(acted, tmp_path / "b", layout, locks)
