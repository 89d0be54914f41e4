"""Change hints for derived indexes: which files swarmq's own writers just changed.

A directory tree opts in by holding ``<root>/.swarmq/search/`` (the memory search index creates
it in the roots it covers). After every durable write, :func:`note_written` appends the file's
path, relative to that root, to ``<root>/.swarmq/search/journal``, so a reader brings its index up
to date by reading a few journal lines instead of re-stating the whole tree.

The journal is a hint, never canonical: a failure to append is ignored (the file itself was
written), and readers reconcile the whole tree by mtime now and then for anything a hint missed
(hand edits, other tools, a lost append).
"""

from __future__ import annotations

import os
import threading
import time

MARKER_PARTS: tuple[str, str] = (".swarmq", "search")
"""Where, below a root, the index keeps its journal (and, for the profiles root, its database)."""

JOURNAL_NAME = "journal"
_MISS_TTL_SECONDS = 5.0
"""A directory with no indexed root above it is re-checked after this long (an index may appear)."""

_roots: dict[str, tuple[str | None, float]] = {}
_roots_lock = threading.Lock()


def marker_dir(root: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(root), *MARKER_PARTS)


def journal_path(root: str | os.PathLike[str]) -> str:
    return os.path.join(marker_dir(root), JOURNAL_NAME)


def _indexed_root(directory: str) -> str | None:
    """The nearest ancestor of ``directory`` (itself included) that holds the marker, cached."""
    return _lookup(directory, time.monotonic())[0]


def _lookup(directory: str, now: float) -> tuple[str | None, float]:
    """``(root or None, when a None expires)``. A miss asks its parent's cached answer, so a new
    directory (each mission's) costs one ``stat``; a None never outlives the parent's."""
    with _roots_lock:
        cached = _roots.get(directory)
    if cached is not None and (cached[0] is not None or cached[1] > now):
        return cached
    found: tuple[str | None, float] = (None, now + _MISS_TTL_SECONDS)
    parent = os.path.dirname(directory)
    if os.path.isdir(marker_dir(directory)):
        found = (directory, found[1])
    elif parent != directory:
        above = _lookup(parent, now)
        found = (above[0], min(found[1], above[1]))
    with _roots_lock:
        if len(_roots) > 4096:
            _roots.clear()
        _roots[directory] = found
    return found


def note_written(path: str | os.PathLike[str]) -> None:
    """Record that ``path`` changed, in the journal of the indexed root above it, if any."""
    absolute = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(absolute)
    try:
        root = _indexed_root(directory)
        if root is None:
            return
        line = (os.path.relpath(absolute, root) + "\n").encode("utf-8", "surrogateescape")
        fd = os.open(journal_path(root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        with _roots_lock:
            _roots.pop(directory, None)  # the marker may be gone; look again next time
