"""The streaming rewrite of a store file: a copy with some lines replaced, removed or appended.

The mirror's rewrite joins every entry's bytes in memory; a transaction read through the index
(:mod:`._indextxn`) holds only the lines it changed, so it writes the new file by copying the
old one under the store lock: the stretches between changed lines are copied as they are
(``copy_file_range``, no parse), each changed line is written in its place, and new entries go
at the end. The result is the file the mirror's rewrite would write: untouched lines keep their
bytes, a byte-order mark stays first, corrupt lines go to the corrupt sidecar and blank lines
are dropped, removed entries (with a reason) and the FIFO cap's evictions are recorded in the
evicted sidecar before the rename, and the new file replaces the old one atomically
(:func:`~swarmq.storage.atomic.write_atomic_from`: temp file, fsync, fence check, rename).

Lines are found by the index's offsets, each changed one checked where it is read
(:mod:`._indextxn`) and again here (it must start a line and have the indexed length); a file
that does not match raises :class:`~swarmq.knowledge._ftsindex.StaleIndex` and nothing is
written. When the index holds every line of the file as an entry (the common case: a rewrite
leaves no corrupt or blank line) only the changed lines are looked at; otherwise every line is
read in order, the ones the index does not hold parsed to tell corrupt from blank.

After the rename, with the lock still held, the index is updated for the rewrite
(:func:`~swarmq.knowledge._ftsindex.adopt_rewrite`: changed rows replaced, the rows after them
moved by the bytes gained or lost), so the next reader finds it current instead of hashing
every line; a rewrite with a byte-order mark, a FIFO trim, corrupt or blank lines, or more
than :data:`~swarmq.knowledge._ftsindex.SHIFTS_MAX` changed lines leaves it to that reader.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from swarmq.knowledge._ftsindex import FileIndex, StaleIndex, adopt_rewrite
from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge._sidecars import evicted_record
from swarmq.knowledge.model import Entry
from swarmq.knowledge.serialize import dumps_js
from swarmq.storage.atomic import append_lines, write_all, write_atomic_from
from swarmq.storage.jsonl import BOM, CorruptLine, JsonlLine, quarantine_corrupt
from swarmq.storage.locking import Lease

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile

log = logging.getLogger(__name__)

CHUNK = 1 << 20


class Change(NamedTuple):
    """What becomes of the line at an offset."""

    length: int
    """The line's length in the file, newline included."""
    line_no: int
    slot: int | None
    """The line's slot in the index (``None``: unknown, the index is then left to readers)."""
    entry: Entry | None
    """The entry written in its place; ``None`` when it is removed."""
    evicted: tuple[Entry, str | None] | None
    """A removed line's entry and eviction reason (``None``: not recorded)."""


class _Out:
    """The temp file, written through a buffer; stretches of the old file copied in the kernel."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.kernel_copy = hasattr(os, "copy_file_range")

    def write(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            write_all(self.fd, self.buffer)
            self.buffer = bytearray()

    def copy(self, src: int, start: int, end: int) -> None:
        """Bytes ``[start, end)`` of ``src`` as they are."""
        self.flush()
        while start < end:
            count = 0
            if self.kernel_copy:
                try:
                    count = os.copy_file_range(src, self.fd, end - start, start)
                except OSError as exc:
                    if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                        raise
                    self.kernel_copy = False
                    continue
            else:
                data = os.pread(src, min(CHUNK, end - start), start)
                write_all(self.fd, data)
                count = len(data)
            if count == 0:
                raise StaleIndex(f"the store file ends before byte {end}")
            start += count


def copy_rewrite(
    store: TierFile,
    lease: Lease,
    index: FileIndex,
    changes: Mapping[int, Change],
    removed: list[int],
    appended: list[Entry],
    trim: int,
) -> None:
    """Write the store file with ``changes`` (by offset), ``appended`` at the end and the
    ``trim`` oldest entries left out (evicted as ``fifo_cap``); ``removed`` gives the order in
    which removed lines are recorded as evicted."""
    path = store.files.knowledge
    at = store.now()
    src = index.handle.fileno()
    size = os.fstat(src).st_size
    meta = dict(index.db.execute("SELECT key, value FROM meta WHERE key IN ('end', 'lines')"))
    if meta.get("end") != size:
        raise StaleIndex(f"{path}: the index covers {meta.get('end')} bytes of {size}")
    every_line = meta.get("lines") == index.count()
    entry_offsets = (
        None if every_line else {int(o) for (o,) in index.db.execute("SELECT offset FROM offsets")}
    )
    for offset, change in changes.items():
        if offset > 0 and os.pread(src, 1, offset - 1) != b"\n":
            raise StaleIndex(f"{path}: byte {offset} does not start a line")
        if offset + change.length > size:
            raise StaleIndex(f"{path}: the line at byte {offset} runs past the end")
    bom = BOM if os.pread(src, len(BOM), 0) == BOM else b""

    def record(entry: Entry, reason: str) -> str:
        return dumps_js(evicted_record(path, JsonlLine(0, entry.line(), entry.data), reason, at))

    def fill(fd: int) -> None:
        out = _Out(fd)
        out.write(bom)
        fifo: list[str] = []
        corrupt: list[CorruptLine] = []
        left = trim
        handle = index.handle
        handle.seek(0)
        position = line_no = 0
        # Line by line while something must be looked at: the first line (its byte-order
        # mark), the oldest entries the cap evicts, every line when some are not entries.
        while line_no == 0 or left > 0 or entry_offsets is not None:
            data = handle.readline()
            if not data:
                break
            if not data.endswith(b"\n"):
                raise StaleIndex(f"{path}: unterminated line {line_no + 1}")
            line_no += 1
            offset, position = position, position + len(data)
            change = changes.get(offset)
            if change is not None:
                if change.length != len(data):
                    raise StaleIndex(f"{path}: line {line_no} is not the indexed one")
                if change.entry is None:
                    continue
                if left > 0:
                    left -= 1
                    fifo.append(record(change.entry, "fifo_cap"))
                    continue
                out.write(change.entry.raw_bytes() + b"\n")
                continue
            if entry_offsets is not None and offset not in entry_offsets:
                item = parse_line(line_no, data)
                if isinstance(item, Entry):
                    raise StaleIndex(f"{path}: line {line_no} is an entry the index lacks")
                if item is not None:
                    corrupt.append(item)
                continue
            if left > 0:
                item = parse_line(line_no, data)
                if not isinstance(item, Entry):
                    raise StaleIndex(f"{path}: line {line_no} is not an entry")
                left -= 1
                fifo.append(record(item, "fifo_cap"))
                continue
            out.write(data[len(bom) :] if line_no == 1 else data)
        for offset in sorted(o for o in changes if o >= position):
            out.copy(src, position, offset)
            change = changes[offset]
            if change.entry is not None:
                out.write(change.entry.raw_bytes() + b"\n")
            position = offset + change.length
        out.copy(src, position, size)
        for entry in appended:
            if left > 0:
                left -= 1
                fifo.append(record(entry, "fifo_cap"))
            else:
                out.write(entry.raw_bytes() + b"\n")
        out.flush()
        evicted = [
            record(evicted[0], evicted[1])
            for evicted in (changes[o].evicted for o in removed)
            if evicted is not None and evicted[1] is not None
        ]
        if evicted or fifo:
            append_lines(store.files.evicted, [*evicted, *fifo], lease=lease)
        if corrupt:
            quarantine_corrupt(path, corrupt, lease=lease, corrupt_to=store.files.corrupt)

    seen = dict(index.db.execute("SELECT key, value FROM meta"))
    write_atomic_from(path, fill, lease=lease)
    if every_line and not bom and trim == 0:
        _keep_index_in_step(path, index, seen, changes, appended, size, int(meta["lines"]))


def _keep_index_in_step(
    path: Path,
    index: FileIndex,
    seen: dict[str, object],
    changes: Mapping[int, Change],
    appended: list[Entry],
    size: int,
    lines: int,
) -> None:
    """Update the index for the rewrite just made (the lock still held), so the next reader
    finds it current instead of hashing every line: the changed lines' rows replaced, the rows
    after each moved by the bytes and lines gained or lost before them, appended entries added.
    Only when every changed line's slot is known; any failure leaves the index to the next
    reader, as writers always did (the write itself has succeeded)."""
    gone = [change.slot for _, change in sorted(changes.items())]
    if None in gone:
        return
    shifts: list[tuple[int, int, int]] = []
    added: list[tuple[Entry, int, int, bytes]] = []
    moved_bytes = moved_lines = 0
    for offset in sorted(changes):
        change = changes[offset]
        if change.entry is not None:
            data = change.entry.raw_bytes() + b"\n"
            added.append((change.entry, offset + moved_bytes, change.line_no + moved_lines, data))
            moved_bytes += len(data) - change.length
        else:
            moved_bytes -= change.length
            moved_lines -= 1
        shifts.append((offset + change.length, moved_bytes, moved_lines))
    position, line_no = size + moved_bytes, lines + moved_lines
    for entry in appended:
        data = entry.raw_bytes() + b"\n"
        line_no += 1
        added.append((entry, position, line_no, data))
        position += len(data)
    try:
        with path.open("rb") as handle:
            if os.fstat(handle.fileno()).st_size != position:
                return
            slots = [slot for slot in gone if slot is not None]
            adopt_rewrite(index.db, path, handle, seen, slots, shifts, added, line_no)
    except (OSError, sqlite3.Error) as exc:
        log.warning("knowledge index of %s left for the next reader (%s)", path, exc)
