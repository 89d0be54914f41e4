"""A knowledge file read one line at a time, for a caller that keeps less than the entries.

The mirror (:mod:`._loaded`) keeps every parsed entry; a reader that needs only a few fields of
each (consolidation's full pass) streams the lines through the same parse and rules, keeps the
line's place, and parses a line again at that place when it needs the whole entry.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge.model import Entry
from swarmq.storage.jsonl import CorruptLine


class Place(NamedTuple):
    """Where a line lies in its file."""

    offset: int
    length: int
    """Bytes, with the newline."""
    line_no: int


def scan_entries(handle: BinaryIO) -> Iterator[tuple[Entry, Place]]:
    """Every entry of the open file, in order, with its place, as the mirror reads them: blank
    and corrupt lines skipped, and an unterminated corrupt last line (a write in progress) not
    read."""
    handle.seek(0)
    position = 0
    for line_no, data in enumerate(handle, 1):
        start, position = position, position + len(data)
        parsed = parse_line(line_no, data)
        if isinstance(parsed, Entry):
            yield parsed, Place(start, len(data), line_no)
        elif isinstance(parsed, CorruptLine) and not data.endswith(b"\n"):
            return


def entry_at(handle: BinaryIO, place: Place) -> Entry | None:
    """The entry on the line at ``place`` (``None`` when that line holds none)."""
    parsed = parse_line(place.line_no, os.pread(handle.fileno(), place.length, place.offset))
    return parsed if isinstance(parsed, Entry) else None
