"""A batch of changes to one store, committed in one write under the store lock.

Every entry put or appended here has its secrets redacted first (:func:`redact_fields`): the
curator's enrichment, consolidation's merges and any other rewrite go through here, not through
the add path that redacts new lessons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from swarmq.knowledge.errors import EntryNotFound, InvalidEntry, RevisionConflict
from swarmq.knowledge.model import Entry, Status
from swarmq.knowledge.secrets import redact_fields
from swarmq.knowledge.validation import validate_directive_fields
from swarmq.storage.locking import Lease

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile


def id_of(item: Mapping[str, Any] | Entry) -> str:
    return str(item.id if isinstance(item, Entry) else item.get("id"))


class Transaction:
    """Changes to one store, committed together by :meth:`TierStore.transaction` (or by
    :meth:`commit` inside :meth:`TierStore.locked`).

    This one works on the store's mirror (every entry parsed and kept); a store read through its
    persisted index gets :class:`~swarmq.knowledge._indextxn.IndexedTransaction` instead, which
    reads only the entries asked for and commits by copying the file. Both key their changes by
    a *slot* (the mirror's slot here, the line's byte offset there) that only the hooks
    :meth:`_slot_of`, :meth:`_stored`, :meth:`_stored_items` and :meth:`_write` interpret."""

    def __init__(self, store: TierFile, lease: Lease) -> None:
        self.store = store
        self.lease = lease
        """The store lock's lease (it fences the commit and writes made inside the transaction)."""
        self._mirror = store.mirror
        self.replaced: dict[int, Entry] = {}
        self.removed: dict[int, str | None] = {}
        self.appended: list[Entry] = []

    # -- where the stored entries come from (overridden by the indexed transaction) ------------

    def _slot_of(self, entry_id: str) -> int | None:
        """The slot of the (first) stored entry with ``entry_id``."""
        return self._mirror.by_id.get(entry_id)

    def _stored(self, slot: int) -> Entry:
        """The stored entry at ``slot`` (as committed, without this transaction's changes)."""
        return self._mirror.slots[slot]

    def _stored_items(self) -> list[tuple[int, Entry]]:
        """Every stored entry with its slot, in file order."""
        return list(self._mirror.slots.items())

    def _write(self) -> None:
        """Write the collected changes (some replaced or removed) in one rewrite, then trim."""
        self.store.rewrite_file(
            self.lease, replaced=self.replaced, removed=self.removed, appended=self.appended
        )
        self.store.trim(self.lease)

    def _write_appended(self) -> None:
        """Write the collected changes (appended entries only), then trim."""
        self.store.append_entries(self.appended, self.lease)
        self.store.trim(self.lease)

    # -- the transaction ----------------------------------------------------------------------------

    @property
    def entries(self) -> list[Entry]:
        """The store as it will be written, in file order."""
        out = [self.replaced.get(s, e) for s, e in self._stored_items() if s not in self.removed]
        return [*out, *self.appended]

    def get(self, entry_id: str) -> Entry | None:
        slot = self._slot_of(entry_id)
        if slot is not None and slot not in self.removed:
            return self.replaced.get(slot, self._stored(slot))
        return next((e for e in self.appended if e.id == entry_id), None)

    def put(
        self, item: Mapping[str, Any] | Entry, *, expected_revision: int | None = None
    ) -> Entry:
        """Replace an entry (by id, keeping its position) with a full object; unchanged
        objects keep their original bytes. Raises :class:`RevisionConflict` on a CAS miss."""
        data = dict(item.data if isinstance(item, Entry) else item)
        data = redact_fields(data) or data
        entry_id = str(data.get("id"))
        slot = self._slot_of(entry_id)
        if slot is None or slot in self.removed:
            return self._put_appended(entry_id, data, expected_revision)
        current = self.replaced.get(slot, self._stored(slot))
        if expected_revision is not None and expected_revision != current.revision:
            raise RevisionConflict(entry_id, expected_revision, current.revision)
        if _without_revision(data) == _without_revision(current.data):
            return current
        data["revision"] = current.revision + 1
        entry = Entry(data)
        _check(entry)
        self.replaced[slot] = entry
        return entry

    def _put_appended(
        self, entry_id: str, data: dict[str, Any], expected_revision: int | None
    ) -> Entry:
        for index, current in enumerate(self.appended):
            if current.id == entry_id:
                if expected_revision is not None and expected_revision != current.revision:
                    raise RevisionConflict(entry_id, expected_revision, current.revision)
                data["revision"] = current.revision
                entry = Entry(data)
                _check(entry)
                self.appended[index] = entry
                return entry
        raise EntryNotFound(f"no entry {entry_id} in {self.store.files.knowledge}")

    def append(self, item: Mapping[str, Any] | Entry) -> Entry:
        entry = item if isinstance(item, Entry) else Entry(item)
        cleaned = redact_fields(entry.data)
        entry = entry if cleaned is None else Entry(cleaned)
        if self.get(entry.id) is not None:
            raise InvalidEntry(entry.id, ["an entry with this id already exists"])
        _check(entry)
        self.appended.append(entry)
        return entry

    def remove(self, entry_id: str, *, reason: str | None) -> Entry:
        """Take an entry out of the store; with a ``reason`` it is recorded in the evicted
        sidecar (pass ``None`` only when you stored it elsewhere yourself)."""
        slot = self._slot_of(entry_id)
        if slot is None or slot in self.removed:
            for index, entry in enumerate(self.appended):
                if entry.id == entry_id:
                    return self.appended.pop(index)
            raise EntryNotFound(f"no entry {entry_id} in {self.store.files.knowledge}")
        self.removed[slot] = reason
        return self.replaced.pop(slot, self._stored(slot))

    def commit(self) -> None:
        """Write the collected changes in one append or one rewrite, then the FIFO trim."""
        if not self.replaced and not self.removed:
            if self.appended:
                self._write_appended()
            return
        self._write()


def _check(entry: Entry) -> None:
    errors = validate_directive_fields(entry.data)
    status = entry.get("status")
    if status is not None and status not in {s.value for s in Status}:
        errors.append(f"unknown status {status!r}")
    if errors:
        raise InvalidEntry(entry.id, errors)


def _without_revision(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "revision"}
