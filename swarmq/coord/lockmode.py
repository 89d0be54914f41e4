"""Which store locks a process may use: one discipline per workspace, failing closed.

A writer of a canonical file either holds the cluster (Redis) lock or does not write. Same-host
file locks do not exclude Redis-lock holders, so they are used only when the roster says
``locks: single-host`` *and* the workspace id file records the same mode; a cluster process
finding a single-host workspace (or the reverse) is refused before it writes anything, and an
unreachable Redis is an error naming the URL, never a silent fallback.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from swarmq.memory.locking import Lease, LocalLocks, LockError, StoreLocks
from swarmq.memory.workspace_id import ID_FILE, RootId, WorkspaceIdError, ensure_root_id
from swarmq.roster.schema import Roster

if TYPE_CHECKING:
    from swarmq.coord.cluster import Cluster


class LockModeMismatch(LockError):
    """The roster's lock discipline differs from the one recorded beside the stores."""


def canonical_roots(roster: Roster) -> list[Path]:
    """Roots whose files are locked: the workspace, and each configured root outside it."""
    roots: list[Path] = []
    for root in (roster.workspace_dir, roster.profiles_dir, roster.shared_dir, roster.hive_dir,
                 roster.runtime_dir):  # fmt: skip
        if not any(root == other or other in root.parents for other in roots):
            roots.append(root)
    return roots


def ensure_identity(roster: Roster) -> list[RootId]:
    """Mark the workspace and every existing canonical root with an id file (``locks`` from the
    roster when new) and check that each recorded mode is the roster's;
    :class:`LockModeMismatch` names the file if not."""
    marked = []
    for root in canonical_roots(roster):
        if root != roster.workspace_dir and not root.is_dir():
            continue  # not created yet: marked by the first process that finds it
        try:
            found = ensure_root_id(root, roster.locks)
        except OSError as exc:
            raise WorkspaceIdError(f"{root / ID_FILE}: cannot create the workspace id file "
                                   f"({exc.strerror or exc}); nothing was written") from exc
        if found.locks != roster.locks:
            raise LockModeMismatch(
                f"{root / ID_FILE} records locks: {found.locks}, but the roster says "
                f"locks: {roster.locks}; single-host file locks and cluster locks do not exclude "
                "each other, so nothing was written. To switch, stop every writer of the workspace, "
                "then make the two agree (set \"locks\" in that file, or the roster's `locks:`)."
            )
        marked.append(found)
    return marked


class UnreachableLocks:
    """Stands in for the cluster's locks while its Redis does not answer: reading commands go
    on, and the first write is refused with the reason (so nothing is written)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def hold(self, resource: str, *, timeout: float | None = None) -> AbstractContextManager[Lease]:
        raise LockError(f"cannot lock {resource!r}: {self.reason}")


def store_locks(
    roster: Roster, cluster: Cluster | None = None, *, timeout: float = 2.0, lazy: bool = False
) -> StoreLocks:
    """The store locks this process must use for ``roster``.

    Raises :class:`LockModeMismatch`, or :class:`~swarmq.coord.connection.RedisUnavailable`
    (naming the URL) when the cluster's Redis does not answer; with ``lazy`` the latter becomes
    :class:`UnreachableLocks`, which refuses at the first write instead. Never same-host locks
    for a cluster workspace.
    """
    from swarmq.coord.connection import RedisUnavailable

    ensure_identity(roster)
    if roster.locks == "single-host":
        return LocalLocks(roster.runtime_dir / "locks")
    if cluster is None:
        from swarmq.coord.cluster import Cluster

        try:
            cluster = Cluster.connect(roster, timeout=timeout)
        except RedisUnavailable as exc:
            if not lazy:
                raise
            return UnreachableLocks(f"{exc}; store writes need the cluster lock")
    return cluster.locks
