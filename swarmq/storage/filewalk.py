"""The files of a directory tree that searches over plain-text notes read.

Memory search (its SQLite index) and the meaning-aware ranking of memory notes must see the same
files, or one would rank notes the other cannot find: a walk that skips dot names (temporary
files, swarmq's side directories, the search index itself), follows no symlinks (a link out of
the tree, or a loop) and leaves out files too large to be notes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator


def walk_files(
    roots: Iterable[str], suffixes: tuple[str, ...], max_bytes: int
) -> Iterator[tuple[str, tuple[int, int]]]:
    """``(path, (mtime_ns, size))`` of each regular file under ``roots`` whose name ends in
    one of ``suffixes`` and whose size is at most ``max_bytes``; a root that is missing, not a
    directory or unreadable yields nothing."""
    stack = [root.rstrip(os.sep) or os.sep for root in roots]
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(suffixes) and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_size <= max_bytes:
                        yield entry.path, (st.st_mtime_ns, st.st_size)
