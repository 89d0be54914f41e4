"""A write refused for space undoes itself: an append cut back to the file's previous length,
a rewrite that leaves the old file and no temp file, a corrupt line quarantined once however
often a rewrite fails; the error is ``DiskFull`` ("no space left on <path>").

``RLIMIT_FSIZE`` (in a child process, ``SIGXFSZ`` ignored) makes writes past a size come out
short, then fail (``EFBIG``), as a full disk does (``ENOSPC``), without mounting anything; the
full disk itself, and its ``DiskFull``, are in ``tests/chaos/test_disk_full_chaos.py``.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from swarmq.storage.atomic import _Landed
from swarmq.storage.jsonl import CorruptLine, corrupt_path, quarantine_corrupt, read_jsonl

CHILD = textwrap.dedent(
    """
    import errno, json, os, resource, signal, sys
    from pathlib import Path
    from swarmq.storage.atomic import append_lines, write_atomic
    from swarmq.storage.locking import LocalLocks
    from swarmq.storage.space import DiskFull

    path, mode = Path(sys.argv[1]), sys.argv[2]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    size = path.stat().st_size
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource.RLIM_INFINITY))
    locks = LocalLocks(path.parent / "locks")
    try:
        with locks.hold("file:" + str(path)) as lease:
            if mode == "append":
                append_lines(path, ["x" * 60, "y" * 60], lease=lease)
            else:
                write_atomic(path, "z" * (size + 500), lease=lease)
    except OSError as exc:
        print(json.dumps({"errno": exc.errno, "disk_full": isinstance(exc, DiskFull)}))
    """
)


def run_child(path: Path, mode: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=path.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_short_append_is_cut_back_to_the_previous_length(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    before = '{"id":"a"}\n{"id":"b"}\n' * 20
    path.write_text(before)
    result = run_child(path, "append")
    assert result == {"errno": errno.EFBIG, "disk_full": False}  # too large, not a full disk
    assert path.read_text() == before  # not a byte of the torn append is left


def test_a_failed_rewrite_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    path.write_text('{"id":"a"}\n' * 20)
    result = run_child(path, "rewrite")
    assert result == {"errno": errno.EFBIG, "disk_full": False}
    assert path.read_text() == '{"id":"a"}\n' * 20
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_a_corrupt_line_is_quarantined_once_however_often_it_is_offered(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    path.write_text('{"id":"a"}\nnot json\n{"id":"b"}\n')
    corrupt = read_jsonl(path).corrupt
    assert [c.line_no for c in corrupt] == [2]
    assert quarantine_corrupt(path, corrupt) == 1
    assert quarantine_corrupt(path, corrupt) == 0  # a rewrite that failed, then a retry
    other = [CorruptLine(3, b"not json", "invalid JSON")]  # same text, another line: recorded
    assert quarantine_corrupt(path, other) == 1
    records = [json.loads(line) for line in corrupt_path(path).read_text().splitlines()]
    assert [(r["line"], r["text"]) for r in records] == [(2, "not json"), (3, "not json")]


def test_an_append_is_cut_back_only_when_nothing_was_appended_after_it(tmp_path: Path) -> None:
    """A lock-free appender (a ledger shared by workers) must not cut through the line another
    process appended after its own: then its torn tail stays, for readers to quarantine."""
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b"old\n")
    for other, expected in ((b"", b"old\n"), (b"theirs\n", b"old\nmine-torntheirs\n")):
        path.write_bytes(b"old\n")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            landed = _Landed()
            landed.write(fd, memoryview(b"mine-torn"))
            if other:
                with path.open("ab") as handle:
                    handle.write(other)
            landed.cut_back(fd)
        finally:
            os.close(fd)
        assert path.read_bytes() == expected
