"""The ``.agents/`` layout and crash-safe writes for stores made of many small files.

Pool entries and learnings are one file each. Fencing each of them through
:func:`swarmq.memory.atomic.write_atomic` would leave a lock and a fence file beside every one;
instead a whole store shares one fence record (``<store>/.swarmq/<store>.fence``): every replace,
move or removal in the store checks the writer's lease against it right before it lands.

Lock order, to rule out deadlock between jobs: knowledge → pool → learnings → feedback →
metrics; citations are only ever held alone.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from swarmq.memory.atomic import commit_guard, fsync_dir
from swarmq.memory.locking import Lease, file_resource


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
    def feedback_lock(self) -> str:
        return file_resource(self.feedback)

    @property
    def metrics_lock(self) -> str:
        return file_resource(self.metrics)


def anchor(store: Path) -> Path:
    """The virtual file whose fence record guards every file of ``store``."""
    return store / store.name


def write_file(
    path: Path, text: str, *, lease: Lease | None, store: Path, mode: int = 0o600
) -> None:
    """Replace ``path`` atomically (temp + fsync + fenced rename + directory fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(text.encode("utf-8"))
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        with commit_guard(anchor(store), lease):
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def remove_file(path: Path, *, lease: Lease | None, store: Path) -> bool:
    """Remove ``path`` if it exists (fenced); ``True`` when something was removed."""
    with commit_guard(anchor(store), lease):
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
    fsync_dir(path.parent)
    return True


def move_file(src: Path, dst: Path, text: str, *, lease: Lease | None, store: Path) -> None:
    """Write ``text`` at ``dst``, then remove ``src``: a crash in between leaves two copies
    (readers prefer the more advanced one), never none."""
    write_file(dst, text, lease=lease, store=store)
    if src != dst:
        remove_file(src, lease=lease, store=store)


def rename_file(src: Path, dst: Path, *, lease: Lease | None, store: Path) -> None:
    """Rename within one filesystem, fenced (used to archive and to file processed inputs)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with commit_guard(anchor(store), lease):
        os.replace(src, dst)
    fsync_dir(dst.parent)
    if src.parent != dst.parent:
        fsync_dir(src.parent)
