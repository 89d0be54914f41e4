"""The lock discipline recorded beside the stores: every canonical root carries a workspace id
file naming its ``locks`` mode, and a process whose roster says otherwise is refused before it
writes (see :mod:`swarmq.coord.lockmode` for which locks a process then uses).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from swarmq.coord.settings import LockMode
from swarmq.storage.locking import LockError
from swarmq.storage.workspace_id import ID_FILE, RootId, WorkspaceIdError, ensure_root_id


class LockModeMismatch(LockError):
    """The roster's lock discipline differs from the one recorded beside the stores."""


def canonical_roots(workspace_dir: Path, roots: Iterable[Path]) -> list[Path]:
    """Roots whose files are locked: the workspace, and each configured root outside it."""
    out: list[Path] = []
    for root in (workspace_dir, *roots):
        if not any(root == other or other in root.parents for other in out):
            out.append(root)
    return out


def ensure_identity(locks: LockMode, *, workspace_dir: Path, roots: Iterable[Path]) -> list[RootId]:
    """Mark the workspace and every existing canonical root with an id file (``locks`` when
    new) and check that each recorded mode is ``locks`` (the roster's);
    :class:`LockModeMismatch` names the file if not."""
    marked = []
    for root in canonical_roots(workspace_dir, roots):
        if root != workspace_dir and not root.is_dir():
            continue  # not created yet: marked by the first process that finds it
        try:
            found = ensure_root_id(root, locks)
        except OSError as exc:
            raise WorkspaceIdError(
                f"{root / ID_FILE}: cannot create the workspace id file "
                f"({exc.strerror or exc}); nothing was written"
            ) from exc
        if found.locks != locks:
            raise LockModeMismatch(
                f"{root / ID_FILE} records locks: {found.locks}, but the roster says "
                f"locks: {locks}; single-host file locks and cluster locks do not exclude "
                "each other, so nothing was written. To switch, stop every writer of the workspace, "
                'then make the two agree (set "locks" in that file, or the roster\'s `locks:`).'
            )
        marked.append(found)
    return marked
