"""The lock discipline recorded beside the stores: every canonical root carries a workspace id
file naming its ``locks`` mode, and a process whose roster says otherwise is refused before it
writes (see :mod:`swarmq.coord.lockmode` for which locks a process then uses).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from swarmq.coord.settings import LockMode
from swarmq.storage.locking import LockError
from swarmq.storage.workspace_id import (
    ID_FILE,
    RootId,
    WorkspaceIdError,
    ensure_root_id,
    set_root_locks,
)


class LockModeMismatch(LockError):
    """The roster's lock discipline differs from the one recorded beside the stores."""


def mismatch_message(id_file: Path, recorded: str, wanted: str) -> str:
    """Why a process of mode ``wanted`` may not write where ``recorded`` is recorded, and the
    command that switches the workspace."""
    writers = (
        "`swarmq down` on every host of the swarm"
        if recorded == "cluster"
        else "swarmq commands run without a swarm.yaml, such as `swarmq knowledge add`"
    )
    return (
        f"{id_file} records locks: {recorded}, but the roster says locks: {wanted}; "
        "single-host file locks and cluster locks do not exclude each other, so nothing was "
        f"written. To switch the workspace to {wanted}, stop its {recorded} writers ({writers}), "
        f"then run `swarmq workspace set-locks {wanted}` with this roster"
    )


def switch_locks(
    locks: LockMode, *, workspace_dir: Path, roots: Iterable[Path]
) -> list[tuple[Path, str | None]]:
    """Record ``locks`` in the id file of the workspace and of every existing canonical root;
    returns each root with the mode it had (``None``: it had no id file)."""
    switched = []
    for root in canonical_roots(workspace_dir, roots):
        if root != workspace_dir and not root.is_dir():
            continue
        switched.append((root, set_root_locks(root, locks)))
    return switched


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
            raise LockModeMismatch(mismatch_message(root / ID_FILE, found.locks, locks))
        marked.append(found)
    return marked
