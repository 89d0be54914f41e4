"""A transaction on a store read through its persisted index instead of its mirror.

A recorded injection (``shown_count`` + 1 for a few entries) or a night's consolidation commit
changes a handful of lines; over the mirror it first parses every line of the store and keeps
them (about 11 KB per entry: 1.1 GB at 100k entries, in every MCP or hook server that records
an injection). Here, with the store lock held, the entries the caller asks for are looked up by
id in the index (:mod:`._ftsindex`, synchronised with the file when it was opened) and read
from the file at their offsets, each checked to parse to an entry with that id (the index is
never trusted over the file: a mismatch rebuilds the index once, then fails the transaction
with :class:`~swarmq.knowledge._ftsindex.StaleIndex`, nothing written). The commit copies the
file (:mod:`._linecopy`). Changes are keyed by the line's byte offset, which names the same
line whatever index generation found it.

:attr:`entries` (the whole store) parses every line, for this transaction only.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from swarmq.knowledge._ftsindex import FileIndex, StaleIndex
from swarmq.knowledge._linecopy import Change, copy_rewrite
from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge.model import Entry
from swarmq.knowledge.transaction import Transaction
from swarmq.storage.atomic import append_lines
from swarmq.storage.locking import Lease

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile

log = logging.getLogger(__name__)


class _Line(NamedTuple):
    entry: Entry
    length: int
    line_no: int
    slot: int | None
    """The index's slot of the line (``None`` when found by parsing the file)."""


class IndexedTransaction(Transaction):
    """:class:`Transaction` over the store's index: only the entries asked for are read."""

    def __init__(self, store: TierFile, lease: Lease, index: FileIndex) -> None:
        super().__init__(store, lease)
        self._index = index
        _ensure_id_index(index)
        self._lines: dict[int, _Line] = {}
        """Lines read, by offset: the entry as stored, its length and line number."""
        self._offsets: dict[str, int | None] = {}
        self._all: list[tuple[int, Entry]] | None = None

    def close(self) -> None:
        self._index.close()

    # -- reading through the index --------------------------------------------------------------

    def _slot_of(self, entry_id: str) -> int | None:
        if entry_id in self._offsets:
            return self._offsets[entry_id]
        try:
            found = self._lookup(entry_id)
        except StaleIndex as exc:
            log.warning("knowledge index stale (%s); rebuilding it", exc)
            self._rebuild()
            found = self._lookup(entry_id)
        self._offsets[entry_id] = found
        return found

    def _lookup(self, entry_id: str) -> int | None:
        """The offset of the first line holding ``entry_id``, read and checked."""
        row = self._index.db.execute(
            "SELECT o.offset, e.length, e.line_no, e.slot "
            "FROM entries e JOIN offsets o ON o.slot = e.slot WHERE e.id = ? "
            "ORDER BY e.line_no LIMIT 1",
            (entry_id,),
        ).fetchone()
        if row is None:
            return None
        offset, length, line_no, slot = int(row[0]), int(row[1]), int(row[2]), int(row[3])
        if offset not in self._lines:
            data = os.pread(self._index.handle.fileno(), length, offset)
            item = parse_line(line_no, data)
            if not isinstance(item, Entry) or item.id != entry_id or not data.endswith(b"\n"):
                raise StaleIndex(f"{self._index.path}: line {line_no} is not entry {entry_id}")
            self._lines[offset] = _Line(item, length, line_no, slot)
        return offset

    def _rebuild(self) -> None:
        """Replace the index with one built afresh from the file (which the lock keeps still)."""
        path = self._index.path
        self._index.close()
        index = FileIndex.open(path, rebuild=True)
        if index is None:
            raise StaleIndex(f"{path}: the index cannot be rebuilt (unterminated last line)")
        self._index = index
        _ensure_id_index(index)

    def _stored(self, slot: int) -> Entry:
        return self._lines[slot].entry

    def _stored_items(self) -> list[tuple[int, Entry]]:
        """Every entry, parsed from the file in order (kept for this transaction only)."""
        if self._all is None:
            out: list[tuple[int, Entry]] = []
            handle = self._index.handle
            handle.seek(0)
            position = 0
            for line_no, data in enumerate(handle, 1):
                known = self._lines.get(position)
                item = known.entry if known is not None else parse_line(line_no, data)
                if isinstance(item, Entry):
                    out.append((position, item))
                    self._lines.setdefault(position, _Line(item, len(data), line_no, None))
                position += len(data)
            self._all = out
            first: dict[str, int] = {}
            for offset, entry in out:
                first.setdefault(entry.id, offset)
            self._offsets.update(first)
        return self._all

    # -- committing by copying the file ---------------------------------------------------------

    def _trim_count(self, added: int) -> int:
        """How many of the oldest entries the FIFO cap evicts after this commit."""
        config = self.store.config
        cap = config.hive_max_entries if self.store.tier == "hive" else config.swarm_max_entries
        size = self._index.count() - len(self.removed) + added
        if cap is None or size <= cap * (1.0 + config.fifo_trim_slack):
            return 0
        return size - cap

    def _write_appended(self) -> None:
        if self._trim_count(len(self.appended)):
            self._write()
            return
        append_lines(
            self.store.files.knowledge, [e.line() for e in self.appended], lease=self.lease
        )

    def _write(self) -> None:
        changes: dict[int, Change] = {}
        for offset, entry in self.replaced.items():
            line = self._lines[offset]
            changes[offset] = Change(line.length, line.line_no, line.slot, entry, None)
        for offset, reason in self.removed.items():
            line = self._lines[offset]
            changes[offset] = Change(
                line.length, line.line_no, line.slot, None, (line.entry, reason)
            )
        copy_rewrite(
            self.store,
            self.lease,
            self._index,
            changes,
            [*self.removed],
            self.appended,
            self._trim_count(len(self.appended)),
        )


def _ensure_id_index(index: FileIndex) -> None:
    """Give an index built before it had one its lookup by id (a lookup would otherwise scan
    every row: 30 ms at 100k entries); the read snapshot the index was opened in is taken again
    (the store lock keeps the file, so the index, still). A failure (another process holding
    the index's write lock past the timeout) only leaves the lookups scanning."""
    db = index.db
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'entries_id'"
    ).fetchone()
    if found is not None:
        return
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute("CREATE INDEX IF NOT EXISTS entries_id ON entries (id)")
    except sqlite3.Error as exc:
        log.warning("knowledge index of %s: no lookup by id (%s)", index.path, exc)
    finally:
        if not db.in_transaction:
            db.execute("BEGIN")
            db.execute("SELECT count(*) FROM meta").fetchone()
