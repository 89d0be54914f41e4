"""Which store locks a process may use: one discipline per workspace, failing closed.

A writer of a canonical file either holds the cluster (Redis) lock or does not write. Same-host
file locks do not exclude Redis-lock holders, so they are used only when the roster says
``locks: single-host`` *and* the workspace id file records the same mode; a cluster process
finding a single-host workspace (or the reverse) is refused before it writes anything, and an
unreachable Redis is an error naming the URL, never a silent fallback.
"""

from __future__ import annotations

__all__ = [
    "DeferredLocks",
    "LockModeMismatch",
    "MismatchedLocks",
    "UnreachableLocks",
    "check_lock_mode",
    "store_locks",
    "switch_lock_mode",
]

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from swarmq.coord._identity import LockModeMismatch, ensure_identity, switch_locks
from swarmq.coord.settings import ClusterConfig, LockMode
from swarmq.storage.locking import Lease, LocalLocks, LockError, StoreLocks

if TYPE_CHECKING:
    from swarmq.coord.cluster import Cluster


class UnreachableLocks:
    """Stands in for the cluster's locks while its Redis does not answer: reading commands go
    on, and the first write is refused with the reason (so nothing is written)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def hold(self, resource: str, *, timeout: float | None = None) -> AbstractContextManager[Lease]:
        raise LockError(f"cannot lock {resource!r}: {self.reason}")


class MismatchedLocks(UnreachableLocks):
    """Stands in while the workspace records the other lock mode: reading needs no lock, so
    reading commands go on, and the first write is refused with the command that switches."""


_UNREACHABLE_HINT = "store writes need the cluster lock"
"""What an unreachable Redis means for the store, said after the connection's own error."""


class DeferredLocks:
    """The cluster's locks, connected at the first :meth:`hold`.

    A reading command takes no lock, so it neither imports the Redis client nor waits on a
    connection (in a fresh process that was most of a small read's cost); a command that then
    writes connects at its first hold, and with Redis unreachable that hold is refused with the
    URL (nothing is written), as :class:`UnreachableLocks` refuses. The first outcome is kept
    for the process: a second write does not wait out the connection's timeout again.
    """

    def __init__(self, config: ClusterConfig, *, timeout: float = 2.0) -> None:
        self._config = config
        self._timeout = timeout
        self._locks: StoreLocks | None = None
        self._guard = threading.Lock()

    def hold(self, resource: str, *, timeout: float | None = None) -> AbstractContextManager[Lease]:
        return self.resolved().hold(resource, timeout=timeout)

    def resolved(self) -> StoreLocks:
        """The cluster's locks, or an :class:`UnreachableLocks` naming the URL (connecting on
        the first call only)."""
        with self._guard:
            if self._locks is None:
                from swarmq.coord.cluster import Cluster
                from swarmq.coord.connection import RedisUnavailable

                try:
                    self._locks = Cluster.connect(self._config, timeout=self._timeout).locks
                except RedisUnavailable as exc:
                    self._locks = UnreachableLocks(
                        f"{exc}; {_UNREACHABLE_HINT} (on a machine with no cluster set "
                        "`locks: single-host`)"
                    )
            return self._locks


def check_lock_mode(config: ClusterConfig) -> None:
    """Mark the workspace (``config.locks`` when new) and raise :class:`LockModeMismatch`,
    naming the fixing command, when it records the other mode."""
    ensure_identity(config.locks, workspace_dir=config.workspace_dir, roots=config.roots)


def switch_lock_mode(config: ClusterConfig, locks: LockMode) -> list[tuple[Path, str | None]]:
    """Record ``locks`` beside every canonical root of ``config``; returns each root and the
    mode it had. The caller has stopped every writer of the other mode."""
    return switch_locks(locks, workspace_dir=config.workspace_dir, roots=config.roots)


def store_locks(
    config: ClusterConfig,
    cluster: Cluster | None = None,
    *,
    timeout: float = 2.0,
    lazy: bool = False,
    deferred: bool = False,
) -> StoreLocks:
    """The store locks this process must use under ``config`` (the roster's).

    Raises :class:`LockModeMismatch`, or :class:`~swarmq.coord.connection.RedisUnavailable`
    (naming the URL) when the cluster's Redis does not answer; with ``lazy`` these become
    :class:`MismatchedLocks` and :class:`UnreachableLocks`, which refuse at the first write
    instead. With ``deferred`` (which implies ``lazy``) the cluster's Redis is not asked until
    the first write: a :class:`DeferredLocks`. Never same-host locks for a cluster workspace.
    """
    try:
        check_lock_mode(config)
    except LockModeMismatch as exc:
        if not (lazy or deferred):
            raise
        return MismatchedLocks(str(exc))
    if config.locks == "single-host":
        return LocalLocks(config.runtime_dir / "locks")  # no Redis client imported for these
    if cluster is None and deferred:
        return DeferredLocks(config, timeout=timeout)
    if cluster is None:
        from swarmq.coord.cluster import Cluster
        from swarmq.coord.connection import RedisUnavailable

        try:
            cluster = Cluster.connect(config, timeout=timeout)
        except RedisUnavailable as exc:
            if not lazy:
                raise
            return UnreachableLocks(f"{exc}; {_UNREACHABLE_HINT}")
    return cluster.locks
