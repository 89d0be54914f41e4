"""Crash-safe writes of canonical files.

A whole file is written as temp file + fsync + ``os.replace`` + fsync of the directory, so a
reader sees the old file or the new one, never a mix. JSONL lines are appended with a single
``write`` + fsync, so a crash can at worst leave one torn last line, which readers quarantine
(never a half-merged pair of lines).

When a :class:`~swarmq.storage.locking.Lease` is given, the commit step runs under a short
same-host file lock and checks the fencing token recorded beside the file
(``<dir>/.swarmq/<name>.fence``): a holder whose lease lapsed is refused with
:class:`~swarmq.storage.locking.FencedOff` and its temp file is removed. After the rename the
lease is confirmed once more: a holder that stalled between check and rename past its lease
gets :class:`~swarmq.storage.locking.CommitUnconfirmed`, never a silent success.

A full disk changes nothing: a failed append is cut back to the file's previous length (still
under the commit lock), a failed rewrite leaves the old file and no temp file, and the error is
:class:`~swarmq.storage.space.DiskFull` ("no space left on <path>"), which the CLI reports with its own exit status.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.change_journal import note_written
from swarmq.storage.locking import FencedOff, Lease
from swarmq.storage.space import no_space

if TYPE_CHECKING:  # a reading process never commits: filelock comes with its first commit
    import filelock

SIDE_DIR = ".swarmq"
"""Hidden directory beside canonical files for their commit locks and fence records."""


def fsync_dir(directory: Path) -> None:
    """Persist a rename: without this a power loss can forget the new directory entry."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


IGNORE_BODY = (
    "# swarmq's lock and fence records for the files beside this directory: never commit\n*\n"
)
"""The ``.gitignore`` swarmq drops into each side directory it creates: the records are
per-host state, and a project under Git should not see them as changes."""


def ensure_side_dir(directory: Path) -> Path:
    """``directory/.swarmq``, created with its ``.gitignore`` (only inside swarmq's own
    directory; the project's ``.gitignore`` is never touched)."""
    side = Path(directory) / SIDE_DIR
    side.mkdir(parents=True, exist_ok=True)
    ignore = side / ".gitignore"
    if not ignore.exists():
        _write_ignore(ignore)
    return side


def _write_ignore(ignore: Path) -> None:
    """Create ``ignore`` whole or not at all. It is advice to Git, not data: a full disk or a
    read-only directory leaves it for the next process to write, and the write it came with
    goes on (and meets the same disk with its own, named, error)."""
    tmp = ignore.with_name(f".gitignore.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, IGNORE_BODY.encode("utf-8"))
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, ignore)  # never replaces one another process wrote
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def side_path(path: Path, suffix: str) -> Path:
    """Where the lock or fence record of ``path`` lives."""
    return path.parent / SIDE_DIR / f"{path.name}{suffix}"


FENCE_VERSION = 2
"""Fence records with ``"v": 2`` name the lock they came from, and a writer holding a lock of
another name is refused. Older records (no ``v``) only carry a token and are compared by it."""


def read_fence_record(path: Path) -> tuple[int, str | None]:
    """``(largest token that has written path, lock name that wrote it)``; ``(0, None)`` when
    nothing has, and a ``None`` name for records older than :data:`FENCE_VERSION`."""
    try:
        data = loads_bounded(side_path(path, ".fence").read_text(encoding="utf-8"))
        token = int(data.get("token", 0))
    except (FileNotFoundError, ValueError, AttributeError, TypeError):
        return 0, None
    resource = data.get("resource") if data.get("v") == FENCE_VERSION else None
    return token, resource if isinstance(resource, str) else None


def read_fence(path: Path) -> int:
    """The largest fencing token that has written ``path`` (0 when none has)."""
    return read_fence_record(path)[0]


def check_fence(path: Path, lease: Lease, *, always_record: bool = False) -> int:
    """Validate ``lease`` against the fence record of ``path`` and record its token (unless the
    record already names this token and lock: a holder that writes several times under one
    lease, e.g. a group-commit leader, records it once).

    Refuses (:class:`FencedOff`) a holder whose lock name differs from the one recorded: two
    names for one file mean two hosts that do not exclude each other, and moving one's counter
    past the other's token would let a lost update through. The caller holds the same-host
    commit lock.
    """
    recorded, resource = read_fence_record(path)
    if resource is not None and resource != lease.resource and not _marked_since(resource, path):
        raise FencedOff(
            f"{path}: last written under lock {resource!r}, this writer holds {lease.resource!r}; "
            "two lock names for one file do not exclude each other, so the write is refused "
            "(is the workspace id file missing or different on this host? see docs/locking.md)"
        )
    token = lease.validate(recorded)
    if always_record or token != recorded or resource != lease.resource:
        _record_fence(path, lease, token)
    return token


def _marked_since(recorded: str, path: Path) -> bool:
    """Whether ``recorded`` is this host's own name for ``path`` from before its root got an id
    file (a root created after the writer started): the one change of name that is allowed."""
    if not recorded.startswith("file:"):
        return False
    named, real = recorded[len("file:") :], os.path.realpath(path)
    return real == named or real.startswith(named.rstrip("/") + "/")  # a store locks its directory


def _record_fence(path: Path, lease: Lease, token: int) -> None:
    fence = side_path(path, ".fence")
    tmp = fence.with_name(f"{fence.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    record = {"token": token, "resource": lease.resource, "v": FENCE_VERSION}
    try:
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, fence)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        full = no_space(fence, exc)
        if full is not None:
            raise full from exc
        raise


_COMMIT_LOCKS: dict[str, filelock.FileLock] = {}
"""One commit-lock object per file and process (building a ``FileLock`` costs more than taking
it). It is re-entrant per thread: a writer that holds it around several commits (a group-commit
leader's lock hold) takes it once; each commit still checks the fence and confirms the lease."""


def commit_lock(path: Path) -> filelock.FileLock:
    """The same-host lock that serialises commits of ``path`` (its directory created once)."""
    name = str(side_path(path, ".lock"))
    lock = _COMMIT_LOCKS.get(name)
    if lock is None or not os.path.isdir(os.path.dirname(name)):
        import filelock  # the first commit's import (see the TYPE_CHECKING import)

        ensure_side_dir(path.parent)
        lock = _COMMIT_LOCKS.setdefault(name, filelock.FileLock(name))
    return lock


_HELD: dict[str, tuple[int, int]] = {}
"""Commit locks held across several commits (:func:`commit_locked`): lock file → (process,
thread) holding it."""


@contextlib.contextmanager
def commit_locked(path: Path) -> Iterator[None]:
    """Hold the commit lock of ``path`` across several commits (a group-commit leader's lock
    hold): this thread's commits of ``path`` inside skip re-taking it (the re-entrant take costs
    more than the rest of the guard); each still checks the fence and confirms the lease."""
    name = str(side_path(path, ".lock"))
    with commit_lock(path):
        _HELD[name] = (os.getpid(), threading.get_ident())
        try:
            yield
        finally:
            del _HELD[name]


STALE_TEMP_SECONDS = 600.0
"""A temp file of another host's writer (whose pid means nothing here) this old is stale: no
writer holds its store lock that long between writing the temp and renaming it."""

_SWEPT: dict[str, int] = {}
"""File → its directory's mtime (ns) when this process last looked for stale temps beside it."""
_TEMP = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)-[0-9a-f]{8}$")


def sweep_stale_temps(path: Path) -> int:
    """Remove the temp files a dead writer of ``path`` left (a kill mid-rewrite leaves a full
    copy of the file); the caller holds the file's lock, so no live writer's temp can be among
    them. A temp is stale when its pid is not alive on this host, or it is older than
    :data:`STALE_TEMP_SECONDS`. The directory is listed only when its mtime moved since this
    process last looked (an append costs one ``stat``); returns how many were removed."""
    key = str(path)
    try:
        moved = os.stat(path.parent).st_mtime_ns
    except OSError:
        return 0
    if _SWEPT.get(key) == moved:
        return 0
    prefix = f".{path.name}.tmp-"
    removed = 0
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix)]
    except OSError:
        return 0
    for name in names:
        found = _TEMP.match(name)
        if found is None or found["name"] != path.name or int(found["pid"]) == os.getpid():
            continue
        temp = path.parent / name
        try:
            old = time.time() - temp.stat().st_mtime > STALE_TEMP_SECONDS
            if old or not _alive(int(found["pid"])):
                temp.unlink()
                removed += 1
        except OSError:
            continue
    if len(_SWEPT) > 4096:
        _SWEPT.clear()
    with contextlib.suppress(OSError):
        _SWEPT[key] = os.stat(path.parent).st_mtime_ns
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # another user's process answers PermissionError: alive
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _no_confirm() -> None:
    return None


@contextlib.contextmanager
def commit_guard(
    path: Path, lease: Lease | None, *, confirm: bool = True
) -> Iterator[Callable[[], None]]:
    """Serialise the commit of ``path`` on this host and enforce the lease's fence; after the
    commit, confirm the lease still holds (:class:`CommitUnconfirmed` when it lapsed), unless
    ``confirm`` is False: then the caller confirms (``locking.confirm_by_release``).

    Yields ``confirm_now``: a body whose change is already in the file and whose remaining step
    only makes it durable (an append's fsync) calls it to start the confirmation then, so its
    round trip overlaps that step (with a lease that can, see :class:`EarlyConfirm`); the guard
    still waits for the answer before it returns. The lease then held after the change was
    visible, which is what the confirmation proves."""
    if lease is None:
        yield _no_confirm
        return
    held = _HELD.get(str(side_path(path, ".lock"))) == (os.getpid(), threading.get_ident())
    with contextlib.nullcontext() if held else commit_lock(path):
        check_fence(path, lease)
        sweep_stale_temps(path)
        started: list[Callable[[], None]] = []

        def confirm_now() -> None:
            start = getattr(lease, "start_confirm", None) if confirm else None
            if start is not None and not started:
                started.append(start())

        try:
            yield confirm_now
        except BaseException:
            if started:  # its answer is read (and dropped): the commit failed anyway
                with contextlib.suppress(Exception):
                    started[0]()
            raise
        if confirm:
            (started[0] if started else lease.confirm)()


def write_atomic(
    path: Path | str,
    data: bytes | str,
    *,
    lease: Lease | None = None,
    mode: int = 0o644,
    durable: bool = True,
    guard: AbstractContextManager[None] | None = None,
    sync_dir: Callable[[Path], None] | None = None,
    confirm: bool = True,
) -> None:
    """Replace ``path`` with ``data`` atomically (and durably: fsync of file and directory).

    ``durable=False`` skips the two fsyncs: readers still see the old or the new file, never a
    mix, but a power loss may bring back the old one. Only for derived mirrors that something
    else makes durable. ``guard`` replaces the per-file fence check around the rename (a store
    may fence all its files at once); ``sync_dir`` replaces the directory fsync (a batch of files
    can share one). ``confirm=False`` leaves the lease's confirmation to the caller, who must
    call ``locking.confirm_by_release`` before it reports the write.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    write_atomic_from(
        path,
        lambda fd: write_all(fd, payload),
        lease=lease,
        mode=mode,
        durable=durable,
        guard=guard,
        sync_dir=sync_dir,
        confirm=confirm,
    )


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may take only part of it)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomic_from(
    path: Path | str,
    fill: Callable[[int], None],
    *,
    lease: Lease | None = None,
    mode: int = 0o644,
    durable: bool = True,
    guard: AbstractContextManager[None] | None = None,
    sync_dir: Callable[[Path], None] | None = None,
    confirm: bool = True,
) -> None:
    """:func:`write_atomic` for a body written piece by piece: ``fill(fd)`` writes the new
    file's bytes to the temp file (a store too big to hold in memory is copied through it), with
    the same guarantees; whatever ``fill`` raises leaves the old file and no temp file. ``fill``
    runs before the fence check, so what it records elsewhere (evicted lines) is written before
    the rename, as a caller of :func:`write_atomic` records it before the call."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            fill(fd)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        with guard if guard is not None else commit_guard(path, lease, confirm=confirm):
            _stamp_after(tmp, path)
            os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        full = no_space(path, exc)
        if full is not None:
            raise full from exc
        raise
    if durable:
        (sync_dir or fsync_dir)(path.parent)
    note_written(path)


def _stamp_after(tmp: Path, path: Path) -> None:
    """Give the new file an mtime strictly after the file it replaces.

    Readers tell a changed file by (inode, size, mtime): a rewrite that keeps the size (a
    counter going from 3 to 4) lands on a recycled inode (the file it replaces freed one a
    moment ago) within one tick of the kernel's coarse file clock could look unchanged, and a
    mirror reading it would keep, then write back, the old content: a lost update. Stamping the
    time at nanosecond resolution, and past the old file's whatever the clocks of the hosts
    sharing it say, makes every rewrite visible."""
    try:
        old = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return
    stamp = max(time.time_ns(), old + 1)
    os.utime(tmp, ns=(stamp, stamp))


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
    try:
        with commit_guard(path, lease) as confirm_now:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    payload = b"\n" + payload
                landed = _Landed()
                try:
                    view = memoryview(payload)
                    while view:  # a full disk takes what fits; the next write says why
                        view = view[landed.write(fd, view) :]
                    confirm_now()  # the lines are in the file: confirm while the fsync runs
                    os.fsync(fd)
                except BaseException:
                    landed.cut_back(fd)
                    raise
            finally:
                os.close(fd)
    except BaseException as exc:
        full = no_space(path, exc)
        if full is not None:
            raise full from exc
        raise
    note_written(path)
    return len(payload)


class _Landed:
    """Where the bytes of one append landed, so that a failed append can be cut back to the
    length the file had before it: no torn line, and no line of a write reported failed left
    for a reader to find.

    It is cut back only when its bytes are one contiguous run ending at the end of the file: a
    writer holding the file's lock (every canonical store) always is; a lock-free appender (a
    ledger shared by workers) whose bytes another process appended after, or between, is left
    as it is rather than cut through the other's line, and readers quarantine the torn tail."""

    __slots__ = ("contiguous", "end", "start")

    def __init__(self) -> None:
        self.start: int | None = None
        self.end = 0
        self.contiguous = True

    def write(self, fd: int, data: memoryview) -> int:
        count = os.write(fd, data)
        end = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: just past the bytes written
        if self.start is None:
            self.start = end - count
        elif end - count != self.end:
            self.contiguous = False
        self.end = end
        return count

    def cut_back(self, fd: int) -> None:
        if self.start is None or not self.contiguous:
            return
        with contextlib.suppress(OSError):  # a truncation that fails leaves the torn tail
            if os.fstat(fd).st_size == self.end:
                os.ftruncate(fd, self.start)
                os.fsync(fd)


def append_jsonl(path: Path | str, records: Iterable[object], *, lease: Lease | None = None) -> int:
    """Append records as compact JSON lines (opencode-swarm's ``JSON.stringify`` form)."""
    return append_lines(
        path,
        (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records),
        lease=lease,
    )
