"""Issue 24, forge precision and tool-error recall on heldout20's leftovers: a failed call run
again asking it to say more (``--verbose``) is a look, not a cure; a call the harness killed is
told with what the session's next check of the same state said."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._louder import asks_more
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, sequences


def test_only_verbosity_switches_added_is_asking_for_more() -> None:
    assert asks_more("tiler login --verbose", "tiler login")
    assert asks_more("DEBUG=* tiler login", "tiler login")
    assert asks_more("tiler -vv login", "tiler login")
    assert not asks_more("tiler login", "tiler login")
    assert not asks_more("tiler login --token abc", "tiler login")
    assert not asks_more("docker run -d web", "docker run web")  # -d detaches
    assert not asks_more("tiler logout --verbose", "tiler login")


def test_a_failed_call_rerun_verbose_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("log the tiler client in")
        .bash("tiler login", "Error: session could not be opened (E_NOSESSION)", error=True)
        .bash("tiler login --verbose", "What would you like to log in to? Please say more.")
        .say("The login command does not seem to exist.")
    )
    found = sequences(session.write(tmp_path / "verbose.jsonl"), layout, locks)
    assert not any("worked instead" in f for f in found), found


def test_a_rerun_with_a_real_change_still_cures(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("log the tiler client in")
        .bash("tiler login", "Error: session could not be opened (E_NOSESSION)", error=True)
        .bash("tiler login --device", "Logged in as ana.")
    )
    found = sequences(session.write(tmp_path / "device.jsonl"), layout, locks)
    assert any("`tiler login --device` worked" in f for f in found), found
