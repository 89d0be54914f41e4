"""Index connections and store handles a resident process holds from one search to the next.

A search opens each tier's persisted index (:mod:`._ftsindex`): the store file, an SQLite
connection to its sidecar (which reads the schema), the metadata, the checks against the file;
closing drops SQLite's page cache with the connection. A resident process (the hook server)
asks the same two stores again and again, so it may hold the last search's connection and file
handle here and hand them to the next search of the same store, which verifies them as a fresh
open would (the file's identity, size, mtime and end blocks against the index's metadata, and
the sidecar still being the file the connection opened) before it reads anything through
them. Only a process that asked for it holds anything (:func:`hold`).

A connection is not used across a fork: a child (a worker's prefork process) forgets what its
parent held, and never closes the inherited connections (closing a copy in the child could drop
the parent's file locks), so it opens its own.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import BinaryIO, NamedTuple

HELD_STORES = 16
"""Stores whose connection a process holds at most (least recently given back dropped)."""


class Held(NamedTuple):
    """One store's connection and handle, as the last search left them (no transaction open)."""

    db: sqlite3.Connection
    handle: BinaryIO
    pid: int
    """The process that opened them (a forked child must not use them)."""


_held: dict[str, Held] = {}
_lock = threading.Lock()
_holding = False
_inherited: list[Held] = []
"""What a forked child's parent held: kept referenced, never closed, never used."""


def hold(on: bool = True) -> None:
    """Have this process hold its searches' index connections (``False``: close and stop)."""
    global _holding
    _holding = on
    if not on:
        forget()


def holding() -> bool:
    return _holding


def take(key: str) -> Held | None:
    """The connection and handle held for ``key``, now the caller's; ``None`` when none is."""
    if not _holding:
        return None
    with _lock:
        held = _held.pop(key, None)
    if held is not None and held.pid != os.getpid():  # pragma: no cover - forgotten at fork
        _inherited.append(held)
        return None
    return held


def give(key: str, held: Held) -> bool:
    """Hold ``held`` for ``key`` (replacing and closing what was held for it); ``False`` when
    this process holds nothing, and the caller closes them."""
    if not _holding or held.pid != os.getpid():
        return False
    with _lock:
        previous = _held.pop(key, None)
        _held[key] = held
        dropped = [previous] if previous is not None else []
        while len(_held) > HELD_STORES:
            dropped.append(_held.pop(next(iter(_held))))
    for old in dropped:
        close(old)
    return True


def leave(held: Held) -> None:
    """Neither hold nor close ``held``: a forked child's copy of its parent's connection (an
    index opened before the fork and closed after it, in the child)."""
    _inherited.append(held)


def close(held: Held) -> None:
    held.db.close()
    held.handle.close()


def forget() -> None:
    """Close everything held (tests that change an index behind its metadata's back)."""
    with _lock:
        dropped = list(_held.values())
        _held.clear()
    for held in dropped:
        close(held)


def _forget_in_child() -> None:
    global _lock
    _inherited.extend(_held.values())
    _held.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)
