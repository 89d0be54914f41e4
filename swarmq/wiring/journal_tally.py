"""Folds of append-only JSONL journals that read only what was appended since the last fold.

A scrape every few seconds over journals that grow for months (the LLM ledger, the receipt
journal, the mission index) cannot re-read them each time. A :class:`JournalTally` remembers the
file's inode and the offset up to its last complete line; the next :meth:`JournalTally.refresh`
reads from there. A file that was replaced (another inode) or shrank is folded again from its
start, so the figures always describe the file as it is. A line that does not parse is counted
in :attr:`JournalTally.unreadable` and otherwise skipped: the journals' own readers do the same.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

Key = tuple[str, ...]


class Tally:
    """Sums and maxima by label tuple: what a fold adds to."""

    def __init__(self) -> None:
        self.sums: dict[Key, float] = {}
        self.maxima: dict[Key, float] = {}

    def add(self, key: Key, value: float = 1.0) -> None:
        self.sums[key] = self.sums.get(key, 0.0) + value

    def latest(self, key: Key, value: float) -> None:
        if value > self.maxima.get(key, float("-inf")):
            self.maxima[key] = value

    def total(self, key: Key) -> float:
        return self.sums.get(key, 0.0)


Fold = Callable[[dict[str, Any], Tally], None]


class JournalTally:
    """One journal and the fold of its lines so far."""

    def __init__(self, path: Path, fold: Fold) -> None:
        self.path = Path(path)
        self.fold = fold
        self.tally = Tally()
        self.unreadable = 0
        self._ino = -1
        self._offset = 0

    def reset(self) -> None:
        """Forget the fold (the file is folded again from its start)."""
        self.tally = Tally()
        self.unreadable = 0
        self._ino = -1
        self._offset = 0

    def refresh(self) -> Tally:
        """Fold the lines appended since the last call; returns the tally of the whole file."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below, stat on the same fd
        except FileNotFoundError:
            self.reset()
            return self.tally
        with handle:
            stat = os.fstat(handle.fileno())
            if stat.st_ino != self._ino or stat.st_size < self._offset:
                self.reset()
                self._ino = stat.st_ino
            if stat.st_size == self._offset:
                return self.tally
            handle.seek(self._offset)
            data = handle.read(stat.st_size - self._offset)
        end = data.rfind(b"\n")
        if end < 0:  # a line still being written: fold it once it is complete
            return self.tally
        self._offset += end + 1
        for raw in data[:end].split(b"\n"):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except ValueError:
                self.unreadable += 1
                continue
            if isinstance(value, dict):
                self.fold(value, self.tally)
            else:
                self.unreadable += 1
        return self.tally
