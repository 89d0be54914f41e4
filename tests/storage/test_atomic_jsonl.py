"""Atomic files and JSONL: nothing torn, nothing silently dropped, raw lines kept verbatim."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from pathlib import Path

import pytest

from swarmq.storage.atomic import append_jsonl, append_lines, read_fence, write_atomic
from swarmq.storage.jsonl import (
    CorruptLine,
    JsonlLine,
    corrupt_path,
    iter_jsonl,
    read_jsonl,
    rewrite_jsonl,
)
from swarmq.storage.locking import FencedOff, LocalLocks
from swarmq.storage.paths import UnsafePathError, check_id, resolve_inside


def test_write_atomic_replaces_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "MEMORY.md"
    write_atomic(path, "first — ünïcode\n")
    write_atomic(path, b"second\n")
    assert path.read_text() == "second\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["MEMORY.md"]


class StaleLease:
    """A lease that lost its lock: it refuses to move past a newer recorded token."""

    resource = "f"

    def __init__(self, token: int) -> None:
        self.fencing_token = token

    def validate(self, recorded_token: int) -> int:
        if recorded_token > self.fencing_token:
            raise FencedOff(f"token {self.fencing_token} < recorded {recorded_token}")
        return self.fencing_token

    def confirm(self) -> None:
        """Its lock is never taken by anyone else in these tests."""


def test_a_stale_fencing_token_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    write_atomic(path, "new", lease=StaleLease(7))
    assert read_fence(path) == 7
    with pytest.raises(FencedOff):
        write_atomic(path, "old", lease=StaleLease(6))
    with pytest.raises(FencedOff):
        append_lines(path, ["x"], lease=StaleLease(3))
    assert path.read_text() == "new"


def test_local_locks_move_past_tokens_a_redis_holder_recorded(tmp_path: Path) -> None:
    """Offline maintenance (Redis down) must still write files that workers wrote before."""
    path = tmp_path / "knowledge.jsonl"
    write_atomic(path, "by a worker", lease=StaleLease(41))
    locks = LocalLocks(tmp_path / "locks")
    with locks.hold("f") as lease:
        write_atomic(path, "offline fix", lease=lease)
        assert lease.fencing_token == 42
    with locks.hold("f") as lease:
        assert lease.fencing_token == 43  # the counter followed
    assert path.read_text() == "offline fix" and read_fence(path) == 42


def test_reader_keeps_raw_text_and_reports_corrupt_lines(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    good1 = '{"id":"a","confidence":0.43999999999999995,"lesson":"统一 — ok","n":1}'
    good2 = '{"b":1.0}'
    path.write_bytes(
        (good1 + "\n\n" + '{"truncated": tru\n' + good2 + "\n").encode()
        + b"\xff\xfe garbage\n"
        + b'{"last":'
    )
    content = read_jsonl(path)
    assert [line.raw for line in content.lines] == [good1, good2]
    assert content.lines[0].line_no == 1 and content.lines[1].line_no == 4
    assert [(c.line_no, c.error.split(":")[0]) for c in content.corrupt] == [
        (3, "invalid JSON"),
        (5, ["not UTF-8 (invalid start byte at byte 0)"][0]),
        (6, "invalid JSON"),
    ]
    assert all(isinstance(x, JsonlLine | CorruptLine) for x in iter_jsonl(path))


def test_rewrite_moves_corrupt_lines_to_quarantine_first(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(b'{"a":1}\n{oops\n\xff\n{"b":2}\n')
    content = read_jsonl(path)
    rewrite_jsonl(path, [line.raw for line in content.lines], corrupt=content.corrupt)
    assert path.read_text() == '{"a":1}\n{"b":2}\n'
    kept = [json.loads(line) for line in corrupt_path(path).read_text().splitlines()]
    assert [(k["source"], k["line"], k["text"]) for k in kept] == [
        ("knowledge.jsonl", 2, "{oops"),
        ("knowledge.jsonl", 3, "\ufffd"),
    ]
    assert "raw_b64" in kept[1] and "raw_b64" not in kept[0]
    rewrite_jsonl(path, [])
    assert path.read_text() == ""


def test_append_after_a_torn_line_keeps_both(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"ok":1}\n{"torn":')  # a crash mid-write left no newline
    append_jsonl(path, [{"next": "é"}])
    content = read_jsonl(path)
    assert [line.value for line in content.lines] == [{"ok": 1}, {"next": "é"}]
    assert [c.line_no for c in content.corrupt] == [2]
    with pytest.raises(ValueError, match="must not contain a newline"):
        append_lines(path, ["a\nb"])


def _appender(path: str, tag: int) -> None:
    for i in range(300):
        append_jsonl(Path(path), [{"tag": tag, "i": i, "pad": "x" * 200}])


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_appender, args=(str(path), t)) for t in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    content = read_jsonl(path)
    assert content.corrupt == []
    assert len(content.lines) == 1200


def test_local_locks_fence_tokens_are_monotonic(tmp_path: Path) -> None:
    locks = LocalLocks(tmp_path / "locks")
    tokens = []
    for _ in range(3):
        with locks.hold("store") as lease:
            tokens.append(lease.fencing_token)
    assert tokens == [1, 2, 3]


HOSTILE_IDS = [
    "..",
    "../x",
    "a/b",
    "a\\b",
    "",
    "a" * 65,
    "a\x00b",
    "%2e%2e",
    "ａｂｃ",
    "a b",
    "é",
    "-" * 65,
    ".hidden",
]


@pytest.mark.parametrize("value", HOSTILE_IDS)
def test_check_id_refuses_hostile_ids(value: str) -> None:
    with pytest.raises(UnsafePathError):
        check_id(value, "worker id")


def test_resolve_inside_follows_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "w1").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "w1" / "escape")
    assert resolve_inside(root, "w1", "memory") == root / "w1" / "memory"
    for parts in (("w1", "escape", "x"), ("..", "outside"), ("/etc",), ("a\x00",)):
        with pytest.raises(UnsafePathError):
            resolve_inside(root, *parts)


def test_resolve_inside_is_realpath_for_links_kept_inside_and_paths_not_made_yet(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    (root / "w1" / "real").mkdir(parents=True)
    os.symlink(root / "w1" / "real", root / "w1" / "alias")
    for parts in (
        ("w1", "alias", "x"),
        ("w1", "missing", "deeper", "f.md"),
        ("w1", "real"),
        ("w1", "real", "..", "real"),
        ("w1/real",),
    ):
        assert resolve_inside(root, *parts) == Path(os.path.realpath(root.joinpath(*parts))), parts


def test_the_fence_record_is_written_once_per_lease_and_again_when_it_changes(
    tmp_path: Path,
) -> None:
    target = tmp_path / "store.jsonl"
    fence = tmp_path / ".swarmq" / "store.jsonl.fence"
    locks = LocalLocks(tmp_path / "locks")
    with locks.hold("r") as lease:
        append_lines(target, ["a"], lease=lease)
        first = fence.stat().st_ino
        append_lines(target, ["b"], lease=lease)  # same token, same name: nothing to record
        assert fence.stat().st_ino == first
        token = lease.fencing_token
    with locks.hold("r") as lease:
        append_lines(target, ["c"], lease=lease)
        assert fence.stat().st_ino != first
        assert read_fence(target) == lease.fencing_token > token
    # A record from before lock names (no "v") is rewritten with the name, same token.
    fence.write_text(json.dumps({"token": read_fence(target) + 1}), encoding="utf-8")
    with locks.hold("r") as lease:
        append_lines(target, ["d"], lease=lease)
        assert lease.fencing_token == read_fence(target)  # the token the record already had
        assert json.loads(fence.read_text(encoding="utf-8"))["resource"] == "r"
    assert target.read_text(encoding="utf-8") == "a\nb\nc\nd\n"


def test_a_commit_lock_held_across_commits_still_excludes_other_threads(tmp_path: Path) -> None:
    """commit_locked lets its own thread's commits skip re-taking the lock, nobody else's."""
    import threading

    from swarmq.storage.atomic import commit_locked
    from swarmq.storage.locking import LocalLease

    path = tmp_path / "store.jsonl"
    locks = LocalLocks(tmp_path / "locks")
    landed: list[str] = []

    def other() -> None:  # a writer of the same lock name that does not hold the commit lock
        append_lines(path, ["other"], lease=LocalLease("mine", 10**6))
        landed.append("other")

    with locks.hold("mine") as lease, commit_locked(path):
        append_lines(path, ["mine 1"], lease=lease)  # re-uses the held lock: no deadlock
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=0.3)
        assert thread.is_alive(), "another thread committed while the commit lock was held"
        append_lines(path, ["mine 2"], lease=lease)
    thread.join(timeout=30)
    assert landed == ["other"]
    assert path.read_text().splitlines() == ["mine 1", "mine 2", "other"]
