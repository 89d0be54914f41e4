"""Crash-safe writes of canonical files.

A whole file is written as temp file + fsync + ``os.replace`` + fsync of the directory, so a
reader sees the old file or the new one, never a mix. JSONL lines are appended with a single
``write`` + fsync, so a crash can at worst leave one torn last line, which readers quarantine
(never a half-merged pair of lines).

When a :class:`~swarmq.memory.locking.Lease` is given, the commit step runs under a short
same-host file lock and checks the fencing token recorded beside the file
(``<dir>/.swarmq/<name>.fence``): a holder whose lease lapsed is refused with
:class:`~swarmq.memory.locking.FencedOff` and its temp file is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import filelock

from swarmq.memory.change_journal import note_written
from swarmq.memory.locking import Lease

SIDE_DIR = ".swarmq"
"""Hidden directory beside canonical files for their commit locks and fence records."""


def fsync_dir(directory: Path) -> None:
    """Persist a rename: without this a power loss can forget the new directory entry."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def side_path(path: Path, suffix: str) -> Path:
    """Where the lock or fence record of ``path`` lives."""
    return path.parent / SIDE_DIR / f"{path.name}{suffix}"


def read_fence(path: Path) -> int:
    """The largest fencing token that has written ``path`` (0 when none has)."""
    try:
        data = json.loads(side_path(path, ".fence").read_text(encoding="utf-8"))
        return int(data.get("token", 0))
    except (FileNotFoundError, ValueError, AttributeError, TypeError):
        return 0


def _record_fence(path: Path, lease: Lease, token: int) -> None:
    fence = side_path(path, ".fence")
    tmp = fence.with_name(f"{fence.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.write_text(json.dumps({"token": token, "resource": lease.resource}), encoding="utf-8")
    os.replace(tmp, fence)


@contextlib.contextmanager
def commit_guard(path: Path, lease: Lease | None) -> Iterator[None]:
    """Serialise the commit of ``path`` on this host and enforce the lease's fence."""
    if lease is None:
        yield
        return
    side = path.parent / SIDE_DIR
    side.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(side_path(path, ".lock"))):
        token = lease.validate(read_fence(path))
        _record_fence(path, lease, token)
        yield


def write_atomic(
    path: Path | str,
    data: bytes | str,
    *,
    lease: Lease | None = None,
    mode: int = 0o644,
    durable: bool = True,
    guard: AbstractContextManager[None] | None = None,
    sync_dir: Callable[[Path], None] | None = None,
) -> None:
    """Replace ``path`` with ``data`` atomically (and durably: fsync of file and directory).

    ``durable=False`` skips the two fsyncs: readers still see the old or the new file, never a
    mix, but a power loss may bring back the old one. Only for derived mirrors that something
    else makes durable. ``guard`` replaces the per-file fence check around the rename (a store
    may fence all its files at once); ``sync_dir`` replaces the directory fsync (a batch of files
    can share one).
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        with guard if guard is not None else commit_guard(path, lease):
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        (sync_dir or fsync_dir)(path.parent)
    note_written(path)


def write_json_atomic(
    path: Path | str, value: object, *, lease: Lease | None = None, indent: int | None = 2
) -> None:
    """Pretty-printed JSON (non-ASCII kept literal), replaced atomically."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    write_atomic(path, text, lease=lease)


def append_lines(path: Path | str, lines: Iterable[str], *, lease: Lease | None = None) -> int:
    """Append whole lines with one ``write`` + fsync; returns the number of bytes written.

    Each line must not contain a newline. If the file ends in a torn line (no trailing newline,
    left by a crash), a newline is written first so the torn line stays a separate, quarantinable
    line instead of corrupting the first appended one.
    """
    path = Path(path)
    body = []
    for line in lines:
        if "\n" in line:
            raise ValueError(f"{path}: a JSONL line must not contain a newline")
        body.append(line)
    if not body:
        return 0
    payload = ("\n".join(body) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with commit_guard(path, lease):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            written = os.write(fd, payload)
            if written != len(payload):  # pragma: no cover - regular files write fully
                raise OSError(f"{path}: short append ({written} of {len(payload)} bytes)")
            os.fsync(fd)
        finally:
            os.close(fd)
    note_written(path)
    return len(payload)


def append_jsonl(path: Path | str, records: Iterable[object], *, lease: Lease | None = None) -> int:
    """Append records as compact JSON lines (opencode-swarm's ``JSON.stringify`` form)."""
    return append_lines(
        path,
        (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records),
        lease=lease,
    )
