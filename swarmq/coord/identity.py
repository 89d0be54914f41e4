"""The lock discipline recorded beside the stores: every canonical root carries a workspace id
file naming its ``locks`` mode, and a process whose roster says otherwise is refused before it
writes (see :mod:`swarmq.coord.lockmode` for which locks a process then uses).
"""

from __future__ import annotations

from pathlib import Path

from swarmq.coord.settings import IdentitySettings
from swarmq.storage.locking import LockError
from swarmq.storage.workspace_id import ID_FILE, RootId, WorkspaceIdError, ensure_root_id


class LockModeMismatch(LockError):
    """The roster's lock discipline differs from the one recorded beside the stores."""


def canonical_roots(roster: IdentitySettings) -> list[Path]:
    """Roots whose files are locked: the workspace, and each configured root outside it."""
    roots: list[Path] = []
    for root in (roster.workspace_dir, roster.profiles_dir, roster.shared_dir, roster.hive_dir,
                 roster.runtime_dir):  # fmt: skip
        if not any(root == other or other in root.parents for other in roots):
            roots.append(root)
    return roots


def ensure_identity(roster: IdentitySettings) -> list[RootId]:
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
