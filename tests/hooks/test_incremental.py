"""``forge_session``: each byte of a live session is forged once, a line still being written waits."""

from __future__ import annotations

from pathlib import Path

from swarmq.roster.loader import load_roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.sessions import forge_session, forged_offset
from tests.hooks.support import SESSIONS
from tests.support import write_roster


def test_a_growing_transcript_is_forged_piece_by_piece_and_never_twice(tmp_path: Path) -> None:
    roster = load_roster(
        write_roster(tmp_path, "incr", "redis://127.0.0.1:9/0", locks="single-host"), env={}
    )
    locks = LocalLocks(roster.runtime_dir / "locks")
    lines = (SESSIONS / "cc-kacey-ga4-mcp-server.jsonl").read_bytes().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    half = len(lines) // 2
    live.write_bytes(b"".join(lines[:half]) + lines[half][:40])  # the agent is mid-line

    first = forge_session(roster, locks, "s1", str(live))
    assert first.status in ("forged", "nothing-new", "no-lessons") and first.start == 0
    assert first.end == len(b"".join(lines[:half]))  # the torn line waits
    again = forge_session(roster, locks, "s1", str(live))
    assert again.status == "unchanged" and again.end == first.end  # a repeated Stop hook

    live.write_bytes(b"".join(lines))
    second = forge_session(roster, locks, "s1", str(live))
    assert (second.start, second.end) == (first.end, live.stat().st_size)
    assert forged_offset(roster, live.resolve()) == live.stat().st_size
    assert forge_session(roster, locks, "s1", str(live)).status == "unchanged"
    assert forge_session(roster, locks, "s1", str(tmp_path / "gone.jsonl")).status == "missing"
    assert first.candidates + second.candidates > 0  # the pieces were really mined
