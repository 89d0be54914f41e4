"""Answers of one version of a persisted index, kept by a process for the next query.

A term's postings and a word's trigger phrases depend only on the index's version
(:meth:`~swarmq.knowledge._ftsindex.FileIndex.state`: every change to the entries moves it),
and a resident server is asked about the same words again and again (a prompt, then its
injection; the common words of a project's tasks). Each kept answer is keyed by that version, so
an answer of another version is never used; the least recently used go first once the kept
answers hold ``budget`` units (slots or rows) in all.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Kept(Generic[T]):
    """Answers by key, at most ``budget`` units in all (an answer of size 0 counts as 1) and,
    given ``most``, at most that many answers."""

    def __init__(self, budget: int, most: int | None = None) -> None:
        self.budget = budget
        self.most = most
        self._answers: OrderedDict[tuple[object, ...], tuple[T, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        _every.add(self)

    def get(self, key: tuple[object, ...]) -> T | None:
        with self._lock:
            found = self._answers.get(key)
            if found is None:
                return None
            self._answers.move_to_end(key)
            return found[0]

    def put(self, key: tuple[object, ...], answer: T, size: int) -> None:
        units = max(1, size)
        if units > self.budget:
            return
        with self._lock:
            old = self._answers.pop(key, None)
            if old is not None:
                self._held -= old[1]
            while self._answers and (
                self._held + units > self.budget
                or (self.most is not None and len(self._answers) >= self.most)
            ):
                _, (_, dropped) = self._answers.popitem(last=False)
                self._held -= dropped
            self._answers[key] = (answer, units)
            self._held += units

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()
            self._held = 0

    def renew_lock(self) -> None:
        """In a forked child (every instance's, :func:`_renew_every_lock`): a parent thread may
        have held the lock at the fork, and no thread of the child would ever release it (the
        answers kept are the child's own copy)."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._answers)


_every: weakref.WeakSet[Kept[Any]] = weakref.WeakSet()
"""Every instance alive: each renews its lock in a forked child without its module having to
remember to (the index's kept postings, triggers and counts once did not)."""


def _renew_every_lock() -> None:
    for kept in list(_every):
        kept.renew_lock()


os.register_at_fork(after_in_child=_renew_every_lock)
