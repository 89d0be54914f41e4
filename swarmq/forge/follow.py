"""Following forge's append-only JSONL files: each look reads only the lines added since the last.

Forge consults three files per transcript (the ledger, the forge index, the passage memory).
Reading each one whole every time made a run over n transcripts cost n² line parses (2,000
small transcripts: minutes, 10,000: hours), in ``swarmq forge DIR`` as in a worker that forges
transcript after transcript. A follower is kept per file and process instead: its first look
reads the file, each later one seeks to where it stopped and folds in the new lines.

A follower only ever holds what is on disk: what forge writes reaches it by being read back
after the write (never added by hand), so a write that failed is not remembered as done, and
lines other processes append are seen at the next look. A line without its newline (a write
under way, or torn by a crash) is left for a later look. A file replaced (another inode), cut
shorter, or whose bytes before the stopping point changed (rewritten in place) is read again
from the start; a missing file holds nothing.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from swarmq.storage.boundedjson import loads_line

BOM = b"\xef\xbb\xbf"
CHECK_BYTES = 64
"""How many bytes before the stopping point are compared at each look (a rewrite in place)."""
MAX_FOLLOWED = 32
"""Followers kept per process (least recently used dropped): a worker may serve a few projects."""


class FollowedJsonl(ABC):
    """The fold of one JSONL file's valid lines, brought up to date by :meth:`refresh`.

    Hold :attr:`lock` around a refresh and the reads of the fold that depend on it (workers may
    forge on threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._before = b""
        self.lines_read = 0
        """Lines parsed over this follower's life: about the file's line count when it is read
        once, a multiple of it when read again and again."""
        self.restarts = 0
        """Reads from the start of the file (the first look included)."""

    @abstractmethod
    def clear(self) -> None:
        """Forget the fold (the file is read again from the start)."""

    @abstractmethod
    def fold(self, value: Any) -> None:
        """Fold one valid line's value in, in file order."""

    def refresh(self) -> None:
        """Fold in the lines appended since the last look."""
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            if self._identity is not None or self._offset:
                self._restart(None)
            return
        with handle:
            stat = os.fstat(handle.fileno())
            identity = (stat.st_dev, stat.st_ino)
            if (
                identity != self._identity
                or stat.st_size < self._offset
                or not self._unchanged_before(handle)
            ):
                self._restart(identity)
            if stat.st_size > self._offset:
                self._read_from(handle)

    def _restart(self, identity: tuple[int, int] | None) -> None:
        self.clear()
        self._identity = identity
        self._offset = 0
        self._before = b""
        self.restarts += identity is not None

    def _unchanged_before(self, handle: BinaryIO) -> bool:
        if not self._before:
            return True
        handle.seek(self._offset - len(self._before))
        return handle.read(len(self._before)) == self._before

    def _read_from(self, handle: BinaryIO) -> None:
        handle.seek(self._offset)
        offset, before = self._offset, self._before
        for chunk in handle:
            if not chunk.endswith(b"\n"):
                break  # no newline yet: read when it is complete
            data = chunk[:-1]
            if offset == 0 and data.startswith(BOM):
                data = data[len(BOM) :]
            offset += len(chunk)
            before = (
                chunk[-CHECK_BYTES:]
                if len(chunk) >= CHECK_BYTES
                else (before + chunk)[-CHECK_BYTES:]
            )
            if data.strip():
                self.lines_read += 1
                value = _parse(data)
                if value is not None:
                    self.fold(value)
        self._offset, self._before = offset, before


def _parse(data: bytes) -> Any:
    """A line's value, or ``None`` for a line that is not valid JSON within the bounds (a
    corrupt line is the store's to quarantine; forge only skips it, as ``iter_jsonl`` readers do)."""
    try:
        return loads_line(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


Follower = TypeVar("Follower", bound=FollowedJsonl)

_FOLLOWERS: OrderedDict[tuple[type[FollowedJsonl], str], FollowedJsonl] = OrderedDict()
_FOLLOWERS_LOCK = threading.Lock()


def followed(kind: type[Follower], path: Path) -> Follower:
    """This process's follower of ``path`` of class ``kind`` (created on first use)."""
    name = (kind, os.path.abspath(path))
    with _FOLLOWERS_LOCK:
        found = _FOLLOWERS.get(name)
        if found is None:
            found = _FOLLOWERS[name] = kind(Path(name[1]))
            while len(_FOLLOWERS) > MAX_FOLLOWED:
                _FOLLOWERS.popitem(last=False)
        else:
            _FOLLOWERS.move_to_end(name)
    assert isinstance(found, kind)
    return found
