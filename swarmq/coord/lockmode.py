"""Which store locks a process may use: one discipline per workspace, failing closed.

A writer of a canonical file either holds the cluster (Redis) lock or does not write. Same-host
file locks do not exclude Redis-lock holders, so they are used only when the roster says
``locks: single-host`` *and* the workspace id file records the same mode; a cluster process
finding a single-host workspace (or the reverse) is refused before it writes anything, and an
unreachable Redis is an error naming the URL, never a silent fallback.
"""

from __future__ import annotations

__all__ = ["UnreachableLocks", "store_locks"]

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from swarmq.coord._identity import ensure_identity
from swarmq.coord.settings import ClusterConfig
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


def store_locks(
    config: ClusterConfig,
    cluster: Cluster | None = None,
    *,
    timeout: float = 2.0,
    lazy: bool = False,
) -> StoreLocks:
    """The store locks this process must use under ``config`` (the roster's).

    Raises :class:`LockModeMismatch`, or :class:`~swarmq.coord.connection.RedisUnavailable`
    (naming the URL) when the cluster's Redis does not answer; with ``lazy`` the latter becomes
    :class:`UnreachableLocks`, which refuses at the first write instead. Never same-host locks
    for a cluster workspace.
    """
    ensure_identity(config.locks, workspace_dir=config.workspace_dir, roots=config.roots)
    if config.locks == "single-host":
        return LocalLocks(config.runtime_dir / "locks")  # no Redis client imported for these
    if cluster is None:
        from swarmq.coord.cluster import Cluster
        from swarmq.coord.connection import RedisUnavailable

        try:
            cluster = Cluster.connect(config, timeout=timeout)
        except RedisUnavailable as exc:
            if not lazy:
                raise
            return UnreachableLocks(f"{exc}; store writes need the cluster lock")
    return cluster.locks
