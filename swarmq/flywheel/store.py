"""The ``.agents/`` layout and crash-safe writes for stores made of many small files.

Pool entries and learnings are one file each. Fencing each of them through
:func:`swarmq.storage.atomic.write_atomic` would leave a lock and a fence file beside every one;
instead a whole store shares one fence record (``<store>/.swarmq/<store>.fence``): every replace,
move or removal in the store checks the writer's lease against it right before it lands.

Lock order, to rule out deadlock between jobs: knowledge → pool → learnings → feedback →
metrics; citations are only ever held alone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swarmq.storage.atomic import (
    check_fence,
    ensure_side_dir,
    fsync_dir,
    side_path,
    write_atomic,
)
from swarmq.storage.locking import Lease, file_resource

if TYPE_CHECKING:  # a reading process never commits: filelock comes with its first commit
    import filelock


@dataclass(frozen=True)
class AgentsLayout:
    """Where each AgentOps store lives under a project's ``.agents/`` directory."""

    root: Path

    @property
    def knowledge(self) -> Path:
        return self.root / "knowledge"

    @property
    def pending(self) -> Path:
        return self.root / "knowledge" / "pending"

    @property
    def processed(self) -> Path:
        return self.root / "knowledge" / "processed"

    @property
    def pool(self) -> Path:
        return self.root / "pool"

    @property
    def learnings(self) -> Path:
        return self.root / "learnings"

    @property
    def patterns(self) -> Path:
        return self.root / "patterns"

    @property
    def archive(self) -> Path:
        return self.root / "archive" / "learnings"

    @property
    def ao(self) -> Path:
        return self.root / "ao"

    @property
    def citations(self) -> Path:
        return self.root / "ao" / "citations.jsonl"

    @property
    def feedback(self) -> Path:
        return self.root / "ao" / "feedback.jsonl"

    @property
    def failures(self) -> Path:
        """swarmq's log of failure signatures observed per session (recurrence confirms)."""
        return self.root / "ao" / "failures.jsonl"

    @property
    def probes(self) -> Path:
        """Missing paths a session probed and then resolved: observations, not lessons
        (:mod:`swarmq.flywheel.probes`)."""
        return self.root / "ao" / "probes.jsonl"

    @property
    def probes_forgotten(self) -> Path:
        """The ids of the observations a person forgot: forging their transcript again does not
        record them again (written under :attr:`probes_lock`)."""
        return self.root / "ao" / "probes-forgotten.jsonl"

    @property
    def feedback_cursor(self) -> Path:
        return self.root / "ao" / "feedback-cursor.json"

    @property
    def metrics(self) -> Path:
        return self.root / "ao" / "metrics"

    @property
    def forge(self) -> Path:
        return self.root / "ao" / "forge"

    @property
    def research(self) -> Path:
        return self.root / "research"

    # -- lock names (one per store) ------------------------------------------------------------

    @property
    def knowledge_lock(self) -> str:
        return file_resource(self.knowledge)

    @property
    def pool_lock(self) -> str:
        return file_resource(self.pool)

    @property
    def learnings_lock(self) -> str:
        """Covers learnings, patterns and the archive: promotion, feedback and maturity."""
        return file_resource(self.learnings)

    @property
    def citations_lock(self) -> str:
        return file_resource(self.citations)

    @property
    def probes_lock(self) -> str:
        return file_resource(self.probes)

    @property
    def feedback_lock(self) -> str:
        return file_resource(self.feedback)

    @property
    def metrics_lock(self) -> str:
        return file_resource(self.metrics)


def anchor(store: Path) -> Path:
    """The virtual file whose fence record guards every file of ``store``."""
    return store / store.name


_FILE_LOCKS: dict[str, filelock.FileLock] = {}


def _file_lock(virtual: Path) -> filelock.FileLock:
    """One reusable same-host lock object per store (creating one per commit is measurable)."""
    name = str(side_path(virtual, ".lock"))
    ensure_side_dir(virtual.parent)
    lock = _FILE_LOCKS.get(name)
    if lock is None:
        import filelock  # the first commit's import (see the TYPE_CHECKING import)

        lock = _FILE_LOCKS[name] = filelock.FileLock(name)
    return lock


@contextlib.contextmanager
def guard(store: Path, lease: Lease | None) -> Iterator[None]:
    """Check the lease against the store's fence right before a commit (same-host file lock
    held), recording the token only when it changed: one fence file per store, not per file."""
    if lease is None:
        yield
        return
    virtual = anchor(store)
    with _file_lock(virtual):
        check_fence(virtual, lease, always_record=False)
        yield
        lease.confirm()


class DirSync:
    """Directories whose new or removed entries still need an fsync: a batch of files is made
    durable with one directory fsync each, before anything (an index, a log) points at them."""

    def __init__(self) -> None:
        self.dirs: set[Path] = set()

    def add(self, directory: Path) -> None:
        self.dirs.add(directory)

    def flush(self) -> None:
        for directory in sorted(self.dirs):
            if directory.exists():
                fsync_dir(directory)
        self.dirs.clear()


def _synced(directory: Path, sync: DirSync | None) -> None:
    if sync is None:
        fsync_dir(directory)
    else:
        sync.add(directory)


def write_file(
    path: Path,
    text: str,
    *,
    lease: Lease | None,
    store: Path,
    mode: int = 0o600,
    sync: DirSync | None = None,
) -> None:
    """Replace ``path`` atomically under the store's fence; its directory fsync is deferred to
    ``sync`` when given."""
    write_atomic(path, text, mode=mode, guard=guard(store, lease),
                 sync_dir=None if sync is None else sync.add)  # fmt: skip


def remove_file(
    path: Path, *, lease: Lease | None, store: Path, sync: DirSync | None = None
) -> bool:
    """Remove ``path`` if it exists (fenced); ``True`` when something was removed."""
    with guard(store, lease):
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
    _synced(path.parent, sync)
    return True


def move_file(
    src: Path,
    dst: Path,
    text: str,
    *,
    lease: Lease | None,
    store: Path,
    sync: DirSync | None = None,
) -> None:
    """Write ``text`` at ``dst``, then remove ``src``: a crash in between leaves two copies
    (readers prefer the more advanced one), never none."""
    write_file(dst, text, lease=lease, store=store, sync=sync)
    if src != dst:
        remove_file(src, lease=lease, store=store, sync=sync)


def rename_file(src: Path, dst: Path, *, lease: Lease | None, store: Path) -> None:
    """Rename within one filesystem, fenced (used to archive and to file processed inputs)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with guard(store, lease):
        os.replace(src, dst)
    fsync_dir(dst.parent)
    if src.parent != dst.parent:
        fsync_dir(src.parent)
