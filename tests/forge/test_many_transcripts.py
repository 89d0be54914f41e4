"""Forging many transcripts reads forge's own files once per run, not once per transcript
(issue 31: the ledger, the forge index and the passage memory were each read whole for every
transcript, so a run over n transcripts parsed n² lines)."""

from __future__ import annotations

import os
from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.forge.follow import FollowedJsonl, followed
from swarmq.forge.ledger import ForgeIndex, Ledger, forged_hashes, index_path, ledger_path
from swarmq.forge.templates import PassageMemory
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import NARRATED

LESSON = (
    "# Session {n}\n\n## User\n\nWhy does job {n} fail?\n\n## Assistant\n\n"
    "Root cause: the worker {n} read `config/job{n}.yaml` before the lock was taken, so two "
    "runs wrote line {n} at once. Fixed by taking the lock first.\n"
)


def lines(path: Path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if line.strip())


def test_a_run_parses_each_line_of_forges_files_once(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    files = []
    for n in range(40):
        path = tmp_path / f"s{n:03d}.md"
        path.write_text(LESSON.format(n=n), encoding="utf-8")
        files.append(path)
    results = [forge_transcript(p, layout, locks, NARRATED) for p in files]
    assert {r.status for r in results} == {"forged"} and sum(r.new for r in results) == 40
    again = [forge_transcript(p, layout, locks, NARRATED) for p in files]
    assert {r.status for r in again} == {"unchanged"}
    followers: list[FollowedJsonl] = [
        followed(Ledger, ledger_path(layout)),
        followed(ForgeIndex, index_path(layout)),
        followed(PassageMemory, layout.forge / "passages.jsonl"),
    ]
    for follower in followers:
        follower.refresh()  # the last transcript's lines are read at the next look
        assert lines(follower.path) >= 40
        # Read once per transcript, these would be ~40 × 40 / 2 lines, and 80 × 40 for the ledger.
        assert follower.lines_read == lines(follower.path), follower.path
        assert follower.restarts == 1


class Keys(FollowedJsonl):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.keys: list[str] = []

    def clear(self) -> None:
        self.keys.clear()

    def fold(self, value: object) -> None:
        if isinstance(value, dict) and isinstance(value.get("key"), str):
            self.keys.append(value["key"])


def test_a_follower_sees_what_others_append_rewrite_or_replace(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    follower = Keys(path)
    follower.refresh()
    assert follower.keys == [] and follower.restarts == 0  # no file: nothing
    append_jsonl(path, [{"key": "a"}, {"key": "b"}])
    follower.refresh()
    assert follower.keys == ["a", "b"]
    with path.open("ab") as handle:  # another writer, mid-line
        handle.write(b'{"key": "c"}\nnot json\n{"key": "d"')
    follower.refresh()
    assert follower.keys == ["a", "b", "c"]  # the line without its newline waits
    with path.open("ab") as handle:
        handle.write(b"}\n")
    follower.refresh()
    assert follower.keys == ["a", "b", "c", "d"] and follower.restarts == 1
    assert follower.lines_read == 5

    path.write_bytes(b'{"key": "x"}\n{"key": "b"}\n{"key": "c"}\n{"key": "d"}\n{"key": "e"}\n')
    follower.refresh()  # rewritten in place, longer: the bytes before the stop changed
    assert follower.keys == ["x", "b", "c", "d", "e"] and follower.restarts == 2
    path.write_bytes(b'{"key": "y"}\n')
    follower.refresh()  # cut shorter
    assert follower.keys == ["y"]
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b'\xef\xbb\xbf{"key": "z"}\n')
    os.replace(replacement, path)
    follower.refresh()  # another inode (an atomic rewrite), with a byte-order mark
    assert follower.keys == ["z"]
    path.unlink()
    follower.refresh()
    assert follower.keys == []


def test_the_index_follows_hashes_written_by_another_process(layout: AgentsLayout) -> None:
    assert forged_hashes(layout) == set()
    append_jsonl(index_path(layout), [{"content_hash": "h1"}])
    assert forged_hashes(layout) == {"h1"}
