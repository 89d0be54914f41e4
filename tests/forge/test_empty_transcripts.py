"""10,000 empty transcript files took 15 minutes in forge, a lock, a ledger line and two fsyncs
each (issue 31 item 8g); now each costs a ``stat``, and a file that grows is forged then."""

from __future__ import annotations

import time
from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import ledger_path
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import NARRATED

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def test_ten_thousand_empty_files_cost_next_to_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    files = [folder / f"s{n:05d}.jsonl" for n in range(10_000)]
    for path in files:
        path.touch()
    (folder / "blank.md").write_text("\n  \n\t\n")
    layout, locks = AgentsLayout(tmp_path / ".agents"), LocalLocks(tmp_path / "locks")
    started = time.monotonic()
    statuses = {forge_transcript(p, layout, locks).status for p in [*files, folder / "blank.md"]}
    seconds = time.monotonic() - started
    assert statuses == {"empty"}
    assert seconds < 20, seconds  # ~1 s; 15 minutes before
    assert not ledger_path(layout).exists()


def test_an_empty_file_that_grows_is_forged_then(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.touch()
    layout, locks = AgentsLayout(tmp_path / ".agents"), LocalLocks(tmp_path / "locks")
    assert forge_transcript(path, layout, locks).status == "empty"
    path.write_bytes((FIXTURES / "claude-code" / "session-v2.0.jsonl").read_bytes())
    forged = forge_transcript(path, layout, locks, NARRATED)
    assert (
        forged.status == "forged" and forged.new == 6
    )  # the fixture narrates 4 lessons: the 3 most confident kept
