"""A knowledge file read line by line agrees with the store's own read, line for line."""

from __future__ import annotations

import json
from pathlib import Path

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.scan import entry_at, scan_entries
from swarmq.storage.locking import LocalLocks


def _line(entry_id: str, lesson: str) -> bytes:
    return json.dumps({"id": entry_id, "lesson": lesson}).encode("utf-8")


def test_scanned_entries_are_the_stores_and_read_again_at_their_place(tmp_path: Path) -> None:
    swarm = tmp_path / ".swarm"
    swarm.mkdir()
    body = b"".join(
        [
            b"\xef\xbb\xbf" + _line("a", "first, after a byte-order mark") + b"\n",
            b"\n",
            b"{not json\n",
            _line("b", "second, after a blank and a corrupt line") + b"\n",
            b'["not an entry"]\n',
            _line("c", "a last line without its newline"),
        ]
    )
    (swarm / "knowledge.jsonl").write_bytes(body)
    store = KnowledgeStore(swarm, locks=LocalLocks(tmp_path / "locks"), config=KnowledgeConfig())
    with (swarm / "knowledge.jsonl").open("rb") as handle:
        found = list(scan_entries(handle))
        assert [e for e, _ in found] == list(store.swarm.read().entries)
        assert [place.line_no for _, place in found] == [1, 4, 6]
        for entry, place in found:
            again = entry_at(handle, place)
            assert again == entry and again is not None and again.line() == entry.line()


def test_an_unterminated_corrupt_tail_is_a_write_in_progress(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(_line("a", "a whole line") + b"\n" + b'{"id": "b", "les')
    with path.open("rb") as handle:
        assert [e.id for e, _ in scan_entries(handle)] == ["a"]
