"""One knowledge store (swarm, hive or link tier): add, reinforce, update with
compare-and-swap, transactional rewrites, near-duplicate lookups. The store's files (the
mirror, the lock, every lease-bound write) are its collaborator
:class:`~swarmq.knowledge._tierfile.TierFile`; quarantine and restore live in
:mod:`swarmq.knowledge._quarantine`. Code outside :mod:`swarmq.knowledge` uses this class only:
never the tier file, its mirror or a hand-built transaction.

Every change holds the store lock (``TierFiles.resource``) around read-modify-write and passes
its lease to the atomic writers, so a writer whose lease lapsed is fenced off. Concurrent adds
are group-committed (:mod:`swarmq.knowledge._group`). Appends are one ``write`` + fsync;
rewrites are temp file + fsync + rename, after moving corrupt lines to the corrupt sidecar and
recording removed entries in the evicted sidecar.

The writing paths (adds, reinforcement, quarantine, transactions) are imported by the methods
that write: a process that only reads (a search, a list) does not pay for their validation.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from swarmq.knowledge._tierfile import Snapshot, TierFile
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.errors import EntryNotFound
from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.model import Entry
from swarmq.storage.locking import Lease, StoreLocks

if TYPE_CHECKING:  # a reading process never adds, reinforces or quarantines: not imported by it
    from swarmq.knowledge.batch import AddResult
    from swarmq.knowledge.reinforcement import NewLesson, ReinforceOutcome
    from swarmq.knowledge.transaction import Transaction
    from swarmq.knowledge.validation import ValidationResult


@dataclass(frozen=True, slots=True)
class ReinforceResult:
    outcome: ReinforceOutcome | Literal["not_found"]
    entry: Entry | None


class TierStore:
    """The operations on one store: read, add, reinforce, update, transactions, quarantine."""

    def __init__(
        self,
        files: TierFiles,
        *,
        locks: StoreLocks,
        config: KnowledgeConfig | None = None,
        project_name: str = "",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.tier_file = TierFile(
            files, locks=locks, config=config, project_name=project_name, clock=clock
        )
        """The store's files, mirror and lock (for :mod:`swarmq.knowledge`'s own modules)."""

    @property
    def files(self) -> TierFiles:
        return self.tier_file.files

    @property
    def tier(self) -> str:
        return self.tier_file.tier

    @property
    def config(self) -> KnowledgeConfig:
        return self.tier_file.config

    @property
    def project_name(self) -> str:
        return self.tier_file.project_name

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.tier_file.clock

    # -- reading ----------------------------------------------------------------------------------

    def now(self) -> str:
        return self.tier_file.now()

    def read(self) -> Snapshot:
        """Every good entry and every corrupt line, as on disk now."""
        return self.tier_file.read()

    def get(self, entry_id: str) -> Entry | None:
        return self.tier_file.get(entry_id)

    def list(
        self, *, status: str | None = None, category: str | None = None, active_only: bool = False
    ) -> builtins.list[Entry]:
        return self.tier_file.list(status=status, category=category, active_only=active_only)

    def find_duplicate(
        self, lesson: str, *, active_only: bool = True, threshold: float | None = None
    ) -> Entry | None:
        """The first entry (file order) whose lesson is a near-duplicate of ``lesson`` (the
        store's ``dedup_threshold`` unless ``threshold`` is given). Inside :meth:`locked` or
        :meth:`transaction` it sees the store as committed, not the pending changes."""
        return self.tier_file.find_duplicate(lesson, active_only=active_only, threshold=threshold)

    def warm(self) -> None:
        """Load the store and build its near-duplicate and contradiction indexes now, so the
        first add does not pay for them."""
        self.tier_file.warm()

    # -- adding and reinforcing -------------------------------------------------------------------

    def add(self, new: NewLesson, *, phase: int | None = None) -> AddResult:
        """Validate, then reinforce an active near-duplicate or append a new entry. Concurrent
        adds of this process to this store are group-committed (:mod:`._group`): one lock hold
        and one fsync for all of them; this returns once the add is durable."""
        from swarmq.knowledge._group import group_for

        return group_for(self.tier_file.mirror).submit(self.tier_file, new, phase)

    def add_many(
        self, lessons: Iterable[NewLesson], *, phase: int | None = None
    ) -> builtins.list[AddResult]:
        """Several adds under one lock and one write (each sees the ones before it)."""
        from swarmq.knowledge._prepare import prepare
        from swarmq.knowledge.batch import AddBatch

        prepared = [prepare(self.tier_file, new, phase) for new in lessons]
        with self.tier_file.locked() as lease:
            batch = AddBatch(self.tier_file, lease)
            results = [batch.add(add) for add in prepared]
            batch.commit()
            return results

    def reinforce(
        self, entry_id: str, phase: int, *, project_name: str | None = None
    ) -> ReinforceResult:
        """Confirm an entry in ``phase`` (idempotent within a phase)."""
        with self.tier_file.locked() as lease:
            return self._reinforce_locked(entry_id, phase, lease, self.now(), project_name)

    def _reinforce_locked(
        self, entry_id: str, phase: int, lease: Lease, at: str, project_name: str | None = None
    ) -> ReinforceResult:
        mirror = self.tier_file.mirror
        slot = mirror.by_id.get(entry_id)
        if slot is None:
            return ReinforceResult("not_found", None)
        entry = mirror.slots[slot]
        from swarmq.knowledge.reinforcement import phase_confirmation, reinforce_entry

        confirmation = phase_confirmation(phase, at, project_name or self.project_name)
        changed, outcome = reinforce_entry(
            entry, confirmation, max_confirmed_by=self.config.max_confirmed_by
        )
        if outcome == "reinforced":
            self.tier_file.rewrite_file(lease, replaced={slot: changed})
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
    def transaction(self, *, timeout: float | None = None) -> Iterator[Transaction]:
        """Hold the lock and collect changes; commit them in one write when the block ends
        (nothing is written if it raises)."""
        with self.locked(timeout=timeout) as txn:
            yield txn
            txn.commit()

    @contextlib.contextmanager
    def locked(self, *, timeout: float | None = None) -> Iterator[Transaction]:
        """Hold the store lock (waiting at most ``timeout`` seconds, else
        :class:`~swarmq.storage.locking.LockError`) with the store read fresh under it, and
        collect changes that are written only when the caller calls
        :meth:`Transaction.commit` (for callers that journal between deciding and writing);
        ``txn.lease`` fences the caller's own writes made under the same hold.

        A store this process has not loaded is read through its persisted index when it has
        one (:class:`~swarmq.knowledge._indextxn.IndexedTransaction`: only the entries asked
        for are read, the commit copies the file), so recording a few entries does not load
        the store."""
        from swarmq.knowledge.transaction import Transaction  # writers only (its validation)

        with self.tier_file.locked_for_transaction(timeout=timeout) as (lease, index):
            if index is None:
                yield Transaction(self.tier_file, lease)
                return
            # imported here: it brings the index's tokenizer, which `knowledge list` never needs
            from swarmq.knowledge._indextxn import IndexedTransaction

            try:
                txn = IndexedTransaction(self.tier_file, lease, index)
            except BaseException:
                index.close()
                raise
            try:
                yield txn
            finally:
                txn.close()

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
        from swarmq.knowledge.transaction import id_of

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
        from swarmq.knowledge._quarantine import quarantine

        return quarantine(self.tier_file, entry_id, reason, reported_by)

    def restore(self, entry_id: str, *, revalidate: bool = False) -> Entry:
        """Restore a quarantined entry where it was (re-validated only when asked) or revive an
        archived one."""
        from swarmq.knowledge._quarantine import restore

        return restore(self.tier_file, entry_id, revalidate=revalidate)

    def restore_verdict(self, entry: Entry) -> ValidationResult:
        """What the store's current validation rules say about ``entry``'s lesson (advice,
        unless :meth:`restore` is asked to re-validate)."""
        from swarmq.knowledge._quarantine import restore_verdict

        return restore_verdict(self.tier_file, entry)
