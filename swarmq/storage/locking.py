"""The lock protocol that domain code takes, so the domain packages never import Redis or Celery.

A *store lock* serialises read-modify-write cycles on one canonical file or store. Holding it
yields a :class:`Lease` whose fencing token is checked right before every replace or append
(see :mod:`swarmq.storage.atomic`): a holder whose lease lapsed while it was stalled is refused
instead of overwriting a newer write. Workers pass the Redis-backed implementation from
``swarmq.coord.locks``; tests and single-host tools use :class:`LocalLocks`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from swarmq.errors import Conflict, Unavailable
from swarmq.storage.space import no_space
from swarmq.storage.workspace_id import ID_FILE, lock_name, recorded_lock_mode


class LockError(Unavailable, RuntimeError):
    """Base class of every lock failure."""


class LockModeRefused(LockError):
    """Same-host locks asked for a file of a workspace whose writers hold the cluster's locks."""


class LockTimeout(LockError):
    """The lock was not acquired within the caller's timeout."""


class FencedOff(LockError):
    """A write was refused: the lease lapsed and a newer holder has (or may have) written, or
    the file was last written under a different lock name (another host's view of it)."""


class CommitUnconfirmed(Conflict, LockError):
    """The write reached the file, but the lease lapsed before it could be confirmed.

    A holder stalled between its fence check and its rename: another holder may have read the
    file before this write landed and may overwrite it. Never report such a write as done;
    re-check (or re-apply, where that is idempotent) under a fresh lock.
    """


@runtime_checkable
class Lease(Protocol):
    """What a holder of a store lock can prove about itself at commit time."""

    @property
    def resource(self) -> str:
        """The name the lock was taken on."""
        ...

    @property
    def fencing_token(self) -> int:
        """Monotonic per resource: a later holder always has a larger token."""
        ...

    def validate(self, recorded_token: int) -> int:
        """Check, just before a commit, that this holder may still write.

        ``recorded_token`` is the largest token already recorded beside the file. Returns the
        token to record for this write; raises :class:`FencedOff` when the write must not land.
        """
        ...

    def confirm(self) -> None:
        """Right after a commit: raise :class:`CommitUnconfirmed` unless the lock is still held,
        so a write made by a holder that stalled past its lease is never reported as done."""
        ...


def confirm_by_release(lease: Lease) -> None:
    """Confirm a commit that is its holder's last act under the lock: by the release itself
    where the lease supports it (a Redis release that finds the lock still this holder's proves
    it was held through the commit, one round trip fewer; a release that does not raises
    :class:`CommitUnconfirmed` from the ``hold``), else now, by :meth:`Lease.confirm`."""
    defer = getattr(lease, "confirm_at_release", None)
    if callable(defer):
        defer()
    else:
        lease.confirm()


class EarlyConfirm(Protocol):
    """Optional on a :class:`Lease`: a confirmation whose round trip can overlap the commit's
    last, durability-only step (the fsync of an append already in the file)."""

    def start_confirm(self) -> Callable[[], None]:
        """Send the confirmation now; the returned function, called exactly once, waits for its
        answer and raises as :meth:`Lease.confirm` would."""
        ...


@runtime_checkable
class StoreLocks(Protocol):
    """Factory of store locks; the one object domain functions receive."""

    def hold(self, resource: str, *, timeout: float | None = None) -> AbstractContextManager[Lease]:
        """Block until ``resource`` is held (or ``timeout`` seconds pass), yield its lease."""
        ...


def file_resource(path: Path | str) -> str:
    """The lock name of a canonical file or store directory: every writer of it, on every host,
    derives the same one (from the workspace id, see :mod:`swarmq.storage.workspace_id`)."""
    return lock_name(path)


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def resource_filename(resource: str) -> str:
    """A file name for a resource that is readable, bounded and collision-free."""
    digest = hashlib.sha256(resource.encode("utf-8")).hexdigest()[:16]
    stem = _SAFE.sub("_", resource).strip("_")[-80:] or "resource"
    return f"{stem}-{digest}"


@dataclass
class LocalLease:
    """Lease of a :class:`LocalLocks` lock: valid until released, since flock has no expiry."""

    resource: str
    fencing_token: int
    seq_file: Path | None = None

    def validate(self, recorded_token: int) -> int:
        if recorded_token > self.fencing_token:
            # The counter file was lost (or the workspace just switched to single-host mode,
            # which requires every cluster writer stopped). This process holds the resource's
            # flock and the fence record names the same lock, so moving past the recorded token
            # is safe; the counter file follows so later tokens keep growing.
            self.fencing_token = recorded_token + 1
            if self.seq_file is not None:
                _store_token(self.seq_file, self.fencing_token)
        return self.fencing_token

    def confirm(self) -> None:
        """An flock cannot lapse while its holder lives."""


POLL_SECONDS = 0.001
"""How often a :class:`LocalLocks` waiter retries a held flock."""


class LocalLocks:
    """Store locks for processes on one host: an flock per resource plus a token counter file.

    flock is released by the kernel when a holder dies, so a crashed process never strands the
    lock; it is not reliable on network filesystems, which is why workers use the Redis lock.
    """

    def __init__(self, lock_dir: Path) -> None:
        self.lock_dir = Path(lock_dir)

    @contextlib.contextmanager
    def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
        if recorded_lock_mode(resource) == "cluster":
            # An flock here does not exclude the workers' Redis-lock holders: both would write.
            raise LockModeRefused(
                f"cannot lock {resource!r} with same-host LocalLocks: its workspace records "
                f'"locks": "cluster" in its {ID_FILE}; use the cluster\'s locks '
                "(swarmq.coord.lockmode.store_locks with the roster's cluster config)"
            )
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        name = resource_filename(resource)
        import filelock  # same-host locks only: a cluster's reader never imports it

        lock = filelock.FileLock(str(self.lock_dir / f"{name}.lock"))
        try:
            # A store lock is held for milliseconds: poll every millisecond, not filelock's 50.
            lock.acquire(timeout=-1 if timeout is None else timeout, poll_interval=POLL_SECONDS)
        except filelock.Timeout as exc:
            raise LockTimeout(f"could not lock {resource!r} within {timeout}s") from exc
        try:
            seq_file = self.lock_dir / f"{name}.seq"
            yield LocalLease(resource, _next_token(seq_file), seq_file)
        finally:
            lock.release()


def _next_token(seq_file: Path) -> int:
    """Bump the per-resource counter in place (no temp file + rename on every hold): the caller
    holds the resource's flock, so nobody else reads or writes it, and a counter that reads
    wrong or low is harmless because :meth:`LocalLease.validate` moves past the fence record."""
    fd = os.open(seq_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            current = int(os.pread(fd, 64, 0).decode("ascii").strip() or "0")
        except (UnicodeDecodeError, ValueError):
            current = 0
        token = current + 1
        try:
            os.pwrite(fd, f"{token:>20}\n".encode("ascii"), 0)  # never shorter than before
        except OSError as exc:
            full = no_space(seq_file, exc)
            if full is not None:
                raise full from exc
            raise
        return token
    finally:
        os.close(fd)


def _store_token(seq_file: Path, token: int) -> int:
    tmp = seq_file.with_name(f"{seq_file.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(str(token), encoding="ascii")
        os.replace(tmp, seq_file)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # a full disk must not leave an empty temp file behind
        full = no_space(seq_file, exc)
        if full is not None:
            raise full from exc
        raise
    return token
