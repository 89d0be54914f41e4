"""A store rewritten by another process onto the inode number the mirror last read (freed by
the rewrite before, handed to the next new file in the directory) is not taken for the mirrored
file appended to: the transaction reads the rewritten entry under the store lock and its
counter update is not lost (issue 26: the lost acknowledgements under hybrid retrieval).

It can fail only where the file system hands a freed inode number to the next new file (ext4,
xfs; tmpfs does not): there, without the fix, it failed every run (6 of 6)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bench.mcp import lesson_text
from swarmq.knowledge._loaded import LoadedFile, loaded
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson

ENTRIES = 90
"""Enough bytes that most lines lie outside the mirror's sample windows (and under the FIFO
cap, 100)."""
RECYCLE_TRIES = 256


def _unsampled_line(mirror: LoadedFile, data: bytes) -> int:
    """The index of a line none of the mirror's sample windows covers (a change there keeps
    every window's bytes)."""
    start = 0
    for index, line in enumerate(data.split(b"\n")[:-1]):
        end = start + len(line) + 1
        if all(s + len(blob) <= start or s >= end for s, blob in mirror.samples):
            return index
        start = end
    raise AssertionError("every line is sampled")


def _replace(path: Path, body: bytes, name: str, *, want: int | None = None) -> int:
    """Another process's rewrite: a temp file beside ``path`` renamed over it; its inode. With
    ``want``, new temp files are made (at most RECYCLE_TRIES) until one gets that inode number,
    as the temp file of a later rewrite or of the embeddings sidecar may."""
    made = [path.with_name(f"{name}-{n}") for n in range(RECYCLE_TRIES if want else 1)]
    for tmp in made:
        tmp.write_bytes(b"")
        if os.stat(tmp).st_ino == want:
            break
    for other in made:
        if other != tmp:
            other.unlink(missing_ok=True)
    tmp.write_bytes(body)
    ino = os.stat(tmp).st_ino
    os.replace(tmp, path)
    return ino


def test_a_rewrite_on_a_recycled_inode_is_read_and_no_update_is_lost(
    knowledge: KnowledgeStore,
) -> None:
    store = knowledge.swarm
    store.add_many([NewLesson(lesson_text(7, n)) for n in range(ENTRIES)])
    path = store.files.knowledge
    mirror = store.tier_file.mirror
    store.read()  # the mirror has read the file (a process between two of its calls)
    first = os.stat(path).st_ino
    original = path.read_bytes()
    lines = original.split(b"\n")[:-1]
    target = _unsampled_line(mirror, original)
    entry_id = json.loads(lines[target])["id"]

    # Another process counts an acknowledgement of the target: the same length, one byte
    # changed; a second one adds an entry. The first rename frees the mirrored file's number
    # unless something keeps the file open, and the next file made in the directory gets it.
    counted = lines[target].replace(b'"applied_count":0', b'"applied_count":1')
    assert len(counted) == len(lines[target]) and counted != lines[target]
    rewritten = b"\n".join([*lines[:target], counted, *lines[target + 1 :]]) + b"\n"
    _replace(path, original, ".knowledge.jsonl.tmp-a")
    added = json.loads(lines[-1])
    added["id"] = "00000000-0000-4000-8000-000000000026"
    grown = rewritten + json.dumps(added, separators=(",", ":")).encode() + b"\n"
    second = _replace(path, grown, ".knowledge.jsonl.tmp-b", want=first)

    # This process acknowledges the same entry under the store lock.
    with store.transaction() as txn:
        entry = txn.get(entry_id)
        assert entry is not None
        outcomes = dict(entry.data["retrieval_outcomes"])
        assert outcomes["applied_count"] == 1, "the transaction read a stale mirror"
        outcomes["applied_count"] += 1
        txn.put({**entry.data, "retrieval_outcomes": outcomes})

    on_disk = {
        e["id"]: e for e in (json.loads(x) for x in path.read_text().splitlines() if x.strip())
    }
    assert on_disk[entry_id]["retrieval_outcomes"]["applied_count"] == 2
    assert added["id"] in on_disk and len(on_disk) == ENTRIES + 1
    # While the mirror holds the file it read, its number is never another file's.
    assert second != first


def test_at_most_max_held_files_are_held_and_a_let_go_mirror_reloads(tmp_path: Path) -> None:
    from swarmq.knowledge._loaded import MAX_HELD

    mirrors = []
    for n in range(MAX_HELD + 5):
        path = tmp_path / f"store{n}.jsonl"
        path.write_text(json.dumps({"id": f"e{n}", "lesson": "x"}) + "\n")
        mirror = loaded(path)
        mirror.refresh()
        mirrors.append(mirror)
    held = [m for m in mirrors if m._held is not None]
    assert len(held) <= MAX_HELD and mirrors[-1] in held and mirrors[0] not in held
    # The first one was let go: a rewrite on its old number is still read.
    path = tmp_path / "store0.jsonl"
    _replace(path, (json.dumps({"id": "e0", "lesson": "y"}) + "\n").encode(), "t0")
    mirrors[0].refresh()
    assert [e.lesson for e in mirrors[0].entries()] == ["y"]
