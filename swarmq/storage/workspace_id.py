"""Host-independent identity of a workspace, so every host derives the same lock name for a file.

Lock names used to be ``file:<realpath>``: two hosts that mount one shared workspace at
different paths locked two different names for one file and lost updates. Now a *root*
(the workspace, and any profiles/shared/hive root outside it) carries an id file, and a file's
lock name is ``ws:<root id>:<path relative to that root>``; the mount point never enters it.

The id file is ``<root>/.swarmq-workspace``, UTF-8 JSON::

    {"id": "<32 lowercase hex digits>", "locks": "cluster" | "single-host"}

``id`` never changes once written (it is created with an exclusive link, so concurrent
creators on any host agree on one). ``locks`` records which lock discipline writes the stores
under the root, so a single-host CLI and cluster workers can never write them at once (see
:mod:`swarmq.coord.lockmode`). A file under no marked root keeps the host-local
``file:<realpath>`` name; its fence records then refuse writers that name it differently.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from swarmq.errors import Unavailable
from swarmq.storage.boundedjson import loads_bounded

ID_FILE = ".swarmq-workspace"
"""Name of the id file at the root of a workspace (or other canonical root)."""

LOCK_MODES = ("cluster", "single-host")

_HEX_ID = re.compile(r"^[0-9a-f]{32}$")


class WorkspaceIdError(Unavailable, ValueError):
    """An id file exists but cannot be used; the message names the file."""


@dataclass(frozen=True)
class RootId:
    """A marked root: its directory on this host, its id and its recorded lock mode."""

    root: Path
    id: str
    locks: str


def read_root_id(root: Path) -> RootId | None:
    """The id recorded at ``root``, ``None`` when it has none; a malformed file is an error."""
    path = Path(root) / ID_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        data = loads_bounded(text)
    except ValueError as exc:
        raise WorkspaceIdError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or not _HEX_ID.match(str(data.get("id", ""))):
        raise WorkspaceIdError(f'{path}: expected {{"id": <32 hex digits>, "locks": ...}}')
    locks = str(data.get("locks", "cluster"))
    if locks not in LOCK_MODES:
        raise WorkspaceIdError(
            f"{path}: locks must be one of {', '.join(LOCK_MODES)}, not {locks!r}"
        )
    return RootId(Path(root), str(data["id"]), locks)


def ensure_root_id(root: Path, locks: str) -> RootId:
    """The id of ``root``, creating the id file (with ``locks`` as its mode) if it has none.

    Creation writes a temp file and hard-links it into place, which fails if another process
    (on any host) got there first; then that one's id is read and used.
    """
    if locks not in LOCK_MODES:
        raise ValueError(f"unknown lock mode {locks!r}")
    root = Path(root)
    existing = read_root_id(root)
    if existing is not None:
        return existing
    root.mkdir(parents=True, exist_ok=True)
    tmp = _synced_temp(root, {"id": uuid.uuid4().hex, "locks": locks})
    try:
        with contextlib.suppress(FileExistsError):
            os.link(tmp, root / ID_FILE)  # the first writer's id wins; a later one reads it
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    created = read_root_id(root)
    assert created is not None
    return created


def _synced_temp(root: Path, record: dict[str, str]) -> Path:
    """``record`` written and fsynced to a new temp file beside the id file, ready to be linked
    or renamed into place (so no reader ever sees a partial id file)."""
    tmp = root / f".{ID_FILE}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


_FOUND: dict[str, tuple[str, str]] = {}
"""Directory (real path) → (root real path, root id), for roots already found. Ids never
change, so a found root stays valid; misses are not cached (the id may appear later)."""


_MODES: dict[str, str] = {}
"""Root id → the lock mode its id file recorded, for every root found by :func:`lock_name`."""


def forget_root_ids() -> None:
    """Drop every root found so far (after this process changed an id file itself)."""
    _FOUND.clear()
    _MODES.clear()


def recorded_lock_mode(resource: str) -> str | None:
    """The lock mode recorded by the root a ``ws:<root id>:…`` lock name belongs to (``None``
    for another name, or a root this process has not found)."""
    if not resource.startswith("ws:"):
        return None
    return _MODES.get(resource[3:].partition(":")[0])


def _find_root(directory: str) -> tuple[str, str] | None:
    probe = directory
    seen: list[str] = []
    while True:
        hit = _FOUND.get(probe)
        if hit is not None:
            break
        found = read_root_id(Path(probe))
        if found is not None:
            hit = (probe, found.id)
            _MODES[found.id] = found.locks
            break
        seen.append(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    for walked in seen:
        _FOUND[walked] = hit
    _FOUND[probe] = hit
    return hit


def lock_name(path: Path | str) -> str:
    """The lock name of a canonical file or store directory, the same on every host.

    ``ws:<root id>:<path relative to the nearest marked root>`` (POSIX separators), or
    ``file:<realpath>`` for a path under no marked root.
    """
    real = os.path.realpath(path)
    hit = _find_root(real)
    if hit is None:
        return f"file:{real}"
    root, root_id = hit
    relative = os.path.relpath(real, root).replace(os.sep, "/")
    return f"ws:{root_id}:{relative}"


def set_root_locks(root: Path, locks: str) -> str | None:
    """Record ``locks`` as the mode of ``root``, keeping its id (creating the file if it has
    none); returns the mode recorded before (``None``: there was no id file).

    The caller stops every writer of the old mode first: the switch itself is one atomic
    replace, but a writer that already chose its locks keeps them until it exits.
    """
    if locks not in LOCK_MODES:
        raise ValueError(f"unknown lock mode {locks!r}")
    existing = read_root_id(root)
    if existing is None:
        ensure_root_id(root, locks)
        return None
    if existing.locks == locks:
        return locks
    path = Path(root) / ID_FILE
    tmp = _synced_temp(Path(root), {"id": existing.id, "locks": locks})
    try:
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    directory = os.open(root, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return existing.locks
