"""One batch of knowledge adds decided in order against a store as the adds before them leave
it, and written together: the unit a group commit (:mod:`._group`) or ``add_many`` commits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swarmq.knowledge._prepare import Prepared
from swarmq.knowledge._sidecars import rejected_record
from swarmq.knowledge.contradiction import opposes_any
from swarmq.knowledge.dedup import cached_bigrams
from swarmq.knowledge.model import Entry
from swarmq.knowledge.reinforcement import phase_confirmation, reinforce_entry
from swarmq.knowledge.transaction import Transaction
from swarmq.knowledge.validation import REASON_CONTRADICTION, ValidationResult
from swarmq.similarity.text import jaccard
from swarmq.storage.locking import Lease

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile

AddOutcome = Literal[
    "added",
    "reinforced",
    "already_confirmed_phase",
    "duplicate",
    "rejected",
    "unactionable",
    "quarantined",
]


@dataclass(frozen=True, slots=True)
class AddResult:
    outcome: AddOutcome
    entry: Entry | None
    """The new entry, the reinforced/duplicate one, or the held-out record."""
    validation: ValidationResult = field(default_factory=lambda: ValidationResult(True))
    reason: str | None = None
    order: tuple[int, int] | None = None
    """``(fencing token of the lock hold that committed it, position in its group)``: sorts
    adds to one store in commit order (concurrent adds are decided in that order)."""

    @property
    def stored(self) -> bool:
        return self.outcome in ("added", "reinforced", "already_confirmed_phase", "duplicate")


class AddBatch:
    """Adds decided one by one against the store as the adds before them leave it, written
    together by :meth:`commit` (call everything with the store lock and ``mirror.mutex`` held,
    the mirror refreshed)."""

    def __init__(self, store: TierFile, lease: Lease) -> None:
        self.store = store
        self.lease = lease
        self.txn = Transaction(store, lease)
        self.sidecars: dict[Path, tuple[list[Any], int | None, TierFile]] = {}

    def add(self, add: Prepared) -> AddResult:
        """Decide one add with its store's rules (a store object on the same file)."""
        store, entry, config, check = add.store, add.entry, add.store.config, add.check
        if add.refused is not None:
            return self._reject(store, entry, add.refused, add.at)
        if add.quarantined is not None:  # hostile: held for review, never stored nor reinforcing
            self._sidecar(
                store,
                store.files.quarantined,
                add.quarantined.line(),
                config.quarantined_max_entries,
            )
            return AddResult("quarantined", add.quarantined, add.check, add.check.reason)
        duplicate = self._find_duplicate(entry.lesson, config.dedup_threshold)
        if duplicate is not None:
            reason = f"near-duplicate of {duplicate.id}"
            if add.phase is None:
                return AddResult("duplicate", duplicate, check, reason)
            twin = self.txn.get(duplicate.id)
            if twin is None:
                return AddResult("duplicate", None, check, reason)
            changed, outcome = reinforce_entry(
                twin,
                phase_confirmation(add.phase, add.at, store.project_name),
                max_confirmed_by=config.max_confirmed_by,
            )
            if outcome == "reinforced":
                changed.raw_bytes()  # serialise now: a line that cannot be written fails alone
                self._replace(changed)
                return AddResult("reinforced", changed, check, reason)
            kind: AddOutcome = (
                "already_confirmed_phase" if outcome == "already_confirmed_phase" else "duplicate"
            )
            return AddResult(kind, changed, check, reason)
        if add.layer3 is not None:
            check = self._semantics(store, entry.lesson) or add.layer3
        if add.held is not None:
            self._sidecar(
                store, store.files.unactionable, add.held.line(), config.unactionable_max_entries
            )
            return AddResult("unactionable", add.held, check, add.held.get("unactionable_reason"))
        self.txn.appended.append(entry)
        if self._over_cap():
            self.flush()  # the FIFO trim rewrites the store now, as a lone add would
        return AddResult("added", entry, check)

    # -- the store as the batch leaves it ----------------------------------------------------

    def _find_duplicate(self, lesson: str, threshold: float) -> Entry | None:
        """The first active near-duplicate in file order: the mirror's index (entries this
        batch reinforced are seen in their new state), then the batch's own appends."""
        mirror, replaced = self.store.mirror, self.txn.replaced
        slot = self.store.dedup.find(
            lesson, threshold, lambda s: replaced.get(s, mirror.slots[s]).is_active
        )
        if slot is not None:
            return replaced.get(slot, mirror.slots[slot])
        candidate = cached_bigrams(lesson)
        return next(
            (
                e
                for e in self.txn.appended
                if e.is_active and jaccard(candidate, cached_bigrams(e.lesson)) >= threshold
            ),
            None,
        )

    def _semantics(self, store: TierFile, lesson: str) -> ValidationResult | None:
        """The layer-3 contradiction warning against the mirror's index plus this batch's
        appends (reinforcement never changes a lesson, so the index stays exact for the rest)."""
        mode = store.config.validation_mode
        if store.contradictions().contradicted(lesson) or opposes_any(
            lesson, [e.lesson for e in self.txn.appended], mode
        ):
            return ValidationResult(True, 3, REASON_CONTRADICTION, "warning")
        return None

    def _replace(self, changed: Entry) -> None:
        slot = self.store.mirror.by_id.get(changed.id)
        if slot is not None and slot not in self.txn.removed:
            self.txn.replaced[slot] = changed
            return
        appended = self.txn.appended
        appended[next(i for i, e in enumerate(appended) if e.id == changed.id)] = changed

    def _over_cap(self) -> bool:
        config = self.store.config
        cap = config.hive_max_entries if self.store.tier == "hive" else config.swarm_max_entries
        size = len(self.store.mirror) + len(self.txn.appended)
        return cap is not None and size > cap * (1.0 + config.fifo_trim_slack)

    def _reject(
        self, store: TierFile, entry: Entry, result: ValidationResult, at: str
    ) -> AddResult:
        record = rejected_record(entry.id, entry.lesson, result.reason or "", result.layer or 1, at)
        self._sidecar(store, store.files.rejected, record, store.config.rejected_max_entries)
        return AddResult("rejected", entry, result, result.reason)

    def _sidecar(self, store: TierFile, path: Path, record: Any, cap: int | None) -> None:
        records = self.sidecars.setdefault(path, ([], cap, store))[0]
        records.append(record)

    # -- writing ---------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write the store changes decided so far: one append + fsync, or one rewrite when an
        entry was reinforced; then the FIFO trim. The mirror follows the write."""
        txn = self.txn
        if txn.replaced or txn.removed:
            self.store.rewrite_file(
                self.lease, replaced=txn.replaced, removed=txn.removed, appended=txn.appended
            )
        elif txn.appended:
            self.store.append_entries(txn.appended, self.lease)
        else:
            return
        self.store.trim(self.lease)
        self.txn = Transaction(self.store, self.lease)

    def commit(self) -> None:
        """Make every decision of the batch durable (store file, then held-out sidecars)."""
        self.flush()
        for path, (records, cap, store) in self.sidecars.items():
            store.append_sidecar(path, records, cap, self.lease)
        self.sidecars = {}
