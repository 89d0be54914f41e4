"""A knowledge tier's population that holds the planner's items, not every parsed entry.

A loaded store keeps every entry's whole object (every field of every line): ~4 KiB an entry
in memory, 4 GiB at a million entries before the planner joins anything. The planner reads
only an :class:`~.items.Item` of each active entry (lesson, age, strength, exact-content key,
template key, project, the ids it is kept apart from), and only the entries an action touches
are changed. So the file is scanned once, each line parsed, turned into its item (the same
:func:`~._population.entry_item` a loaded population uses, so the items are equal) and
dropped; the scan keeps each entry's offset, and an entry is parsed again, at its offset, only
when an action touches it. What is written and journalled are those entries.

The file read is the one the scan opened, held open for the run: a writer that replaces the
store meanwhile (a dry run holds no lock) makes a new file, and the offsets still name the
lines scanned. Lines are taken as the mirror takes them (:mod:`swarmq.knowledge._loaded`):
blank lines skipped, corrupt ones skipped (the store's own reads set them aside), a duplicated
id's first entry counts, an unterminated corrupt last line is a write in progress.
"""

from __future__ import annotations

import contextlib
import hashlib
from array import array
from typing import BinaryIO

import numpy as np

from swarmq.consolidation._merge import RUN_KEY
from swarmq.consolidation._population import KnowledgePopulation, entry_item
from swarmq.consolidation._watermark import DigestArray
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Item
from swarmq.knowledge.model import Entry
from swarmq.knowledge.scan import Place, entry_at, scan_entries
from swarmq.knowledge.store import TierStore


class LeanPopulation(KnowledgePopulation):
    """The active entries' items from one scan of the store; entries read at their offsets
    only when an action touches them. Close it (or use it as a context manager) when done."""

    def __init__(
        self,
        store: TierStore,
        *,
        at: str,
        run_id: str,
        config: ConsolidationConfig,
        known: DigestArray | None = None,
    ) -> None:
        super().__init__([], at=at, run_id=run_id, store=store, config=config)
        self.lean: dict[str, Item] = {}
        """Each active entry's item as scanned, in store order."""
        self.read: dict[str, Entry] = {}
        """Each entry read at its offset, as stored (what the journal's ``before`` holds)."""
        self.total = 0
        """Entries in the store (a duplicated id counted each time, as a loaded store's)."""
        self.marks: set[object] = set()
        """Every ``consolidation_run`` mark of the store (recovering a crashed run reads them)."""
        self.fresh: set[str] | None = None
        """With ``known`` (a watermark's digests): the ids of the entries whose exact line it
        does not hold, as :meth:`~._watermark.Watermark.changed` says of a loaded store."""
        self._offsets = array("q")
        self._lengths = array("q")
        self._lines = array("q")
        self._handle: BinaryIO | None = None
        with contextlib.suppress(FileNotFoundError):  # no store yet: nothing to consolidate
            self._handle = store.files.knowledge.open("rb")
        try:
            self._scan(known)
        except BaseException:
            self.close()
            raise

    def _scan(self, known: DigestArray | None) -> None:
        handle = self._handle
        if handle is None:
            self.fresh = set() if known is not None else None
            return
        tier = self.store.tier
        digests = bytearray() if known is not None else None
        ids: list[str] = []
        shared: dict[object, object] = {}
        for parsed, place in scan_entries(handle):
            self.total += 1
            self.marks.add(parsed.get(RUN_KEY))
            if digests is not None:
                line = parsed.line().encode("utf-8", "surrogatepass")
                digests += hashlib.blake2b(line, digest_size=8).digest()
                ids.append(parsed.id)
            if parsed.id in self.order:
                continue  # a duplicated id: the first one counts
            order = self.order[parsed.id] = len(self.order)
            self._offsets.append(place.offset)
            self._lengths.append(place.length)
            self._lines.append(place.line_no)
            if parsed.is_active:
                self.lean[parsed.id] = entry_item(parsed, order, tier, shared)
        if digests is not None and known is not None:
            lines = np.frombuffer(bytes(digests), dtype=np.uint64)
            unknown = np.flatnonzero(~np.isin(lines, known)).tolist()
            self.fresh = {ids[k] for k in unknown}

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> LeanPopulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def entry(self, entry_id: str) -> Entry:
        found = self.current.get(entry_id)
        if found is not None:
            return found
        order = self.order[entry_id]
        if self._handle is None:
            raise KeyError(entry_id)
        place = Place(self._offsets[order], self._lengths[order], self._lines[order])
        parsed = entry_at(self._handle, place)
        if parsed is None or parsed.id != entry_id:
            raise KeyError(entry_id)  # the held file cannot change under its offsets
        self.current[entry_id] = self.read[entry_id] = parsed
        return parsed

    def items(self) -> list[Item]:
        changed = self.changed
        if not changed:
            return list(self.lean.values())
        out: list[Item] = []
        for entry_id, item in self.lean.items():
            entry = changed.get(entry_id)
            if entry is None:
                out.append(item)
            elif entry.is_active:
                out.append(self._item(entry))
        return out

    def item(self, entry_id: str) -> Item:
        entry = self.changed.get(entry_id)
        if entry is None and entry_id in self.lean:
            return self.lean[entry_id]
        return self._item(self.entry(entry_id))
