"""One knowledge store (swarm, hive or link tier): add, reinforce, update with
compare-and-swap, transactional rewrites. Reading and every file write live in
:mod:`swarmq.knowledge.tierfile`; quarantine and restore in
:mod:`swarmq.knowledge.quarantine`.

Every change holds the store lock (``TierFiles.resource``) around read-modify-write and passes
its lease to the atomic writers, so a writer whose lease lapsed is fenced off. Concurrent adds
are group-committed (:mod:`swarmq.knowledge.group`). Appends are one ``write`` + fsync;
rewrites are temp file + fsync + rename, after moving corrupt lines to the corrupt sidecar and
recording removed entries in the evicted sidecar.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from swarmq.knowledge.batch import AddBatch, AddOutcome, AddResult
from swarmq.knowledge.errors import EntryNotFound
from swarmq.knowledge.group import group_for
from swarmq.knowledge.model import Entry
from swarmq.knowledge.prepare import prepare
from swarmq.knowledge.quarantine import quarantine, restore
from swarmq.knowledge.reinforcement import (
    NewLesson,
    ReinforceOutcome,
    phase_confirmation,
    reinforce_entry,
)
from swarmq.knowledge.tierfile import TierFile
from swarmq.knowledge.transaction import Transaction, id_of
from swarmq.storage.locking import Lease

__all__ = ["AddOutcome", "AddResult", "ReinforceResult", "TierStore"]


@dataclass(frozen=True, slots=True)
class ReinforceResult:
    outcome: ReinforceOutcome | Literal["not_found"]
    entry: Entry | None


class TierStore(TierFile):
    """The operations on one store: add, reinforce, update, transactions, quarantine."""

    # -- adding and reinforcing -------------------------------------------------------------------

    def add(self, new: NewLesson, *, phase: int | None = None) -> AddResult:
        """Validate, then reinforce an active near-duplicate or append a new entry. Concurrent
        adds of this process to this store are group-committed (:mod:`.group`): one lock hold
        and one fsync for all of them; this returns once the add is durable."""
        return group_for(self.mirror).submit(self, new, phase)

    def add_many(
        self, lessons: Iterable[NewLesson], *, phase: int | None = None
    ) -> builtins.list[AddResult]:
        """Several adds under one lock and one write (each sees the ones before it)."""
        prepared = [prepare(self, new, phase) for new in lessons]
        with self.locked() as lease:
            batch = AddBatch(self, lease)
            results = [batch.add(add) for add in prepared]
            batch.commit()
            return results

    def reinforce(
        self, entry_id: str, phase: int, *, project_name: str | None = None
    ) -> ReinforceResult:
        """Confirm an entry in ``phase`` (idempotent within a phase)."""
        with self.locked() as lease:
            return self._reinforce_locked(entry_id, phase, lease, self.now(), project_name)

    def _reinforce_locked(
        self, entry_id: str, phase: int, lease: Lease, at: str, project_name: str | None = None
    ) -> ReinforceResult:
        slot = self.mirror.by_id.get(entry_id)
        if slot is None:
            return ReinforceResult("not_found", None)
        entry = self.mirror.slots[slot]
        confirmation = phase_confirmation(phase, at, project_name or self.project_name)
        changed, outcome = reinforce_entry(
            entry, confirmation, max_confirmed_by=self.config.max_confirmed_by
        )
        if outcome == "reinforced":
            self.rewrite_file(lease, replaced={slot: changed})
        return ReinforceResult(outcome, changed)

    # -- updating ---------------------------------------------------------------------------------

    def update(
        self,
        entry_id: str,
        updates: Mapping[str, Any],
        *,
        remove: Iterable[str] = (),
        expected_revision: int | None = None,
    ) -> Entry:
        """Change fields of one entry (new keys appended, others in place). With
        ``expected_revision`` this is a compare-and-swap on the entry's ``revision``."""
        with self.transaction() as txn:
            current = txn.get(entry_id)
            if current is None:
                raise EntryNotFound(f"no entry {entry_id} in {self.files.knowledge}")
            data = {k: v for k, v in current.data.items() if k not in set(remove)}
            data.update(updates)
            return txn.put(data, expected_revision=expected_revision)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Hold the lock and collect changes; commit them in one write when the block ends
        (nothing is written if it raises)."""
        with self.locked() as lease:
            txn = Transaction(self, lease)
            yield txn
            txn.commit(lease)

    def rewrite(
        self,
        changed: Iterable[Mapping[str, Any] | Entry] = (),
        *,
        removed: Mapping[str, str] | None = None,
        appended: Iterable[Mapping[str, Any] | Entry] = (),
        expected_revisions: Mapping[str, int] | None = None,
    ) -> builtins.list[Entry]:
        """Rewrite the store with ``changed`` entries (matched by id, full objects), ``removed``
        ids (id → reason, recorded in the evicted sidecar) and ``appended`` new entries."""
        expected = dict(expected_revisions or {})
        with self.transaction() as txn:
            out = [txn.put(item, expected_revision=expected.get(id_of(item))) for item in changed]
            for entry_id, reason in (removed or {}).items():
                txn.remove(entry_id, reason=reason)
            out.extend(txn.append(item) for item in appended)
            return out

    # -- quarantine -------------------------------------------------------------------------------

    def quarantine(self, entry_id: str, reason: str, reported_by: str = "user") -> Entry:
        """Move an entry to the quarantine sidecar (hidden from queries, kept whole)."""
        return quarantine(self, entry_id, reason, reported_by)

    def restore(self, entry_id: str, *, revalidate: bool = False) -> Entry:
        """Restore a quarantined entry where it was (re-validated only when asked) or revive an
        archived one."""
        return restore(self, entry_id, revalidate=revalidate)
