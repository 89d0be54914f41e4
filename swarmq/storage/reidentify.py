"""Give a copied workspace (or other canonical root) an identity of its own.

A copy carries its original's id file and fence records, so both would lock the same names.
Deleting the id file gives the copy a new id, but every fence record copied with it still
names the old one (``ws:<old id>:<path>``), and a writer holding the new name is refused by
each of them for good: two names for one file never exclude each other, so
:func:`~swarmq.storage.atomic.check_fence` cannot tell a copy from a second host with a
different id file.

:func:`reidentify` settles it in one step, for a root no writer is using (a fresh copy): a new
id (same lock mode), then every fence record under the root that names another root id is
rewritten to the new id with its token unchanged (temp file + rename, each). Records of nested
roots (a subdirectory with its own id file) are theirs and left alone. Running it again is
harmless: the root gets another id and every record follows.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from swarmq.storage.atomic import FENCE_VERSION, SIDE_DIR, write_atomic
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.workspace_id import (
    ID_FILE,
    LOCK_MODES,
    WorkspaceIdError,
    forget_root_ids,
    read_root_id,
)


@dataclass
class Reidentified:
    root: Path
    old_id: str | None
    new_id: str
    locks: str
    rewritten: list[Path] = field(default_factory=list)
    """Fence records that now name the new id."""
    skipped: list[str] = field(default_factory=list)
    """Fence records left as they were, with why (unreadable, another format)."""


def reidentify(root: Path, *, locks: str | None = None) -> Reidentified:
    """A new id for ``root`` (its recorded lock mode kept, or ``locks`` when it has no id file)
    and every fence record under it renamed to that id."""
    root = Path(root)
    if not root.is_dir():
        raise WorkspaceIdError(f"{root}: not a directory")
    old = read_root_id(root)
    mode = old.locks if old is not None else (locks or "cluster")
    if mode not in LOCK_MODES:
        raise WorkspaceIdError(f"locks must be one of {', '.join(LOCK_MODES)}, not {mode!r}")
    new_id = uuid.uuid4().hex
    write_atomic(root / ID_FILE, json.dumps({"id": new_id, "locks": mode}) + "\n", mode=0o644)
    forget_root_ids()  # this process found the old id: look again
    out = Reidentified(root, None if old is None else old.id, new_id, mode)
    for fence in _fence_records(root):
        _rename(fence, new_id, out)
    return out


def _fence_records(root: Path) -> list[Path]:
    """Every ``.swarmq/*.fence`` under ``root``, not descending into nested marked roots."""
    found = []
    for directory, dirs, files in os.walk(root):
        here = Path(directory)
        if here != root and ID_FILE in files:
            dirs[:] = []  # a nested root: its records name its own id
            continue
        if here.name == SIDE_DIR:
            found += [here / name for name in files if name.endswith(".fence")]
    return sorted(found)


def _rename(fence: Path, new_id: str, out: Reidentified) -> None:
    try:
        data = loads_bounded(fence.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        out.skipped.append(f"{fence}: unreadable ({exc})")
        return
    resource = data.get("resource") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("v") != FENCE_VERSION
        or not isinstance(resource, str)
    ):
        out.skipped.append(f"{fence}: names no lock (an older record, compared by token only)")
        return
    if not resource.startswith("ws:"):
        return  # a host-local file: name; it becomes the ws: name at the next write
    _old, _, relative = resource[3:].partition(":")
    if _old == new_id:
        return
    record = {**data, "resource": f"ws:{new_id}:{relative}"}
    write_atomic(fence, json.dumps(record), mode=0o644)
    out.rewritten.append(fence)
