"""One knowledge store (swarm, hive or link tier): read, add, reinforce, update with
compare-and-swap, transactional rewrites. Quarantine and restore live in
:mod:`swarmq.memory.knowledge.quarantine`.

Every change holds the store lock (``TierFiles.resource``) around read-modify-write and passes
its lease to the atomic writers, so a writer whose lease lapsed is fenced off. Appends are one
``write`` + fsync; rewrites are temp file + fsync + rename, after moving corrupt lines to the
corrupt sidecar and recording removed entries in the evicted sidecar.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from swarmq.memory.atomic import append_lines, write_atomic
from swarmq.memory.jsonl import BOM, CorruptLine, JsonlLine, quarantine_corrupt, starts_with_bom
from swarmq.memory.knowledge.config import KnowledgeConfig
from swarmq.memory.knowledge.contradiction import ContradictionIndex
from swarmq.memory.knowledge.dedup import BigramIndex
from swarmq.memory.knowledge.errors import (
    EntryNotFound,
)
from swarmq.memory.knowledge.files import TierFiles
from swarmq.memory.knowledge.indexes import ContradictionListener, DedupListener, mirror_index
from swarmq.memory.knowledge.loaded import loaded
from swarmq.memory.knowledge.model import Entry, Status
from swarmq.memory.knowledge.reinforcement import (
    NewLesson,
    ReinforceOutcome,
    new_entry,
    phase_confirmation,
    reinforce_entry,
)
from swarmq.memory.knowledge.serialize import dumps_js, iso_now
from swarmq.memory.knowledge.sidecars import append_capped, evicted_record, rejected_record
from swarmq.memory.knowledge.transaction import Transaction, id_of
from swarmq.memory.knowledge.validation import (
    ValidationResult,
    check_actionability,
    check_safety,
    check_semantics,
    check_structure,
    validate_directive_fields,
)
from swarmq.memory.locking import Lease, StoreLocks


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A consistent view of a store: good entries in file order and the corrupt lines."""

    entries: tuple[Entry, ...]
    corrupt: tuple[CorruptLine, ...]

    def get(self, entry_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def active(self) -> builtins.list[Entry]:
        return [e for e in self.entries if e.is_active]


AddOutcome = Literal[
    "added", "reinforced", "already_confirmed_phase", "duplicate", "rejected", "unactionable"
]


@dataclass(frozen=True, slots=True)
class AddResult:
    outcome: AddOutcome
    entry: Entry | None
    """The new entry, the reinforced/duplicate one, or the held-out record."""
    validation: ValidationResult = field(default_factory=lambda: ValidationResult(True))
    reason: str | None = None

    @property
    def stored(self) -> bool:
        return self.outcome in ("added", "reinforced", "already_confirmed_phase", "duplicate")


@dataclass(frozen=True, slots=True)
class ReinforceResult:
    outcome: ReinforceOutcome | Literal["not_found"]
    entry: Entry | None


class TierStore:
    """The entries of one store file and its sidecars."""

    def __init__(
        self,
        files: TierFiles,
        *,
        locks: StoreLocks,
        config: KnowledgeConfig | None = None,
        project_name: str = "",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.files = files
        self.tier = files.tier
        self.locks = locks
        self.config = config or KnowledgeConfig()
        self.project_name = project_name
        self.clock = clock or (lambda: datetime.now(UTC))
        self.mirror = loaded(files.knowledge)

    # -- reading ------------------------------------------------------------------------------

    def now(self) -> str:
        return iso_now(self.clock())

    def read(self) -> Snapshot:
        """Every good entry and every corrupt line, as on disk now (no lock needed: files are
        replaced atomically and appended whole lines at a time)."""
        with self.mirror.mutex:
            self.mirror.refresh()
            return Snapshot(tuple(self.mirror.slots.values()), tuple(self.mirror.all_corrupt()))

    def get(self, entry_id: str) -> Entry | None:
        with self.mirror.mutex:
            self.mirror.refresh()
            return self.mirror.get(entry_id)

    def list(self, *, status: str | None = None, category: str | None = None,
             active_only: bool = False) -> builtins.list[Entry]:
        return [
            e for e in self.read().entries
            if (status is None or e.status == status)
            and (category is None or e.category == category)
            and (not active_only or e.is_active)
        ]

    @property
    def dedup(self) -> BigramIndex:
        """Near-duplicate index (call with ``mirror.mutex`` held and the mirror refreshed)."""
        listener: DedupListener = mirror_index(self.mirror, "dedup", DedupListener)
        return listener.index

    def contradictions(self) -> ContradictionIndex:
        mode = self.config.validation_mode
        listener: ContradictionListener = mirror_index(
            self.mirror, f"contradiction:{mode}", lambda: ContradictionListener(ContradictionIndex(mode))
        )
        return listener.index

    def find_duplicate(self, lesson: str, *, active_only: bool = True,
                       threshold: float | None = None) -> Entry | None:
        """The first entry (file order) whose lesson is a near-duplicate of ``lesson``."""
        with self.mirror.mutex:
            self.mirror.refresh()
            return self._find_duplicate(lesson, active_only, threshold)

    def _find_duplicate(self, lesson: str, active_only: bool, threshold: float | None) -> Entry | None:
        slots = self.mirror.slots
        slot = self.dedup.find(
            lesson,
            self.config.dedup_threshold if threshold is None else threshold,
            (lambda s: slots[s].is_active) if active_only else (lambda s: True),
        )
        return None if slot is None else slots[slot]

    # -- locking and committing -----------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[Lease]:
        """Hold the store lock with the mirror refreshed under it."""
        with self.locks.hold(self.files.resource) as lease, self.mirror.mutex:
            self.mirror.refresh()
            yield lease

    def _append(self, entries: builtins.list[Entry], lease: Lease) -> None:
        append_lines(self.files.knowledge, [e.line() for e in entries], lease=lease)
        self.mirror.refresh()

    def _rewrite(
        self,
        lease: Lease,
        *,
        replaced: Mapping[int, Entry] | None = None,
        removed: Mapping[int, str | None] | None = None,
        appended: Iterable[Entry] = (),
    ) -> None:
        """Write the mirror with the changes; ``removed`` maps slot → eviction reason (``None``
        when the caller has already stored the entry elsewhere, e.g. quarantine)."""
        replaced = dict(replaced or {})
        removed = dict(removed or {})
        appended = list(appended)
        at = self.now()
        evicted = [
            dumps_js(evicted_record(
                self.files.knowledge,
                JsonlLine(0, self.mirror.slots[slot].line(), self.mirror.slots[slot].data),
                reason, at,
            ))
            for slot, reason in removed.items() if reason is not None
        ]
        if evicted:
            append_lines(self.files.evicted, evicted, lease=lease)
        slots = self.mirror.slots
        if replaced or removed:
            parts = [
                replaced.get(slot, entry).raw_bytes()
                for slot, entry in slots.items() if slot not in removed
            ]
        else:
            parts = [entry.raw_bytes() for entry in slots.values()]
        parts.extend(e.raw_bytes() for e in appended)
        quarantine_corrupt(self.files.knowledge, self.mirror.all_corrupt(), lease=lease,
                           corrupt_to=self.files.corrupt)
        body = b"\n".join(parts) + b"\n" if parts else b""
        if starts_with_bom(self.files.knowledge):
            body = BOM + body  # kept as the file had it
        write_atomic(self.files.knowledge, body, lease=lease)
        self.mirror.adopt_rewrite(replaced, set(removed), appended, body)

    def _trim(self, lease: Lease) -> int:
        """FIFO cap: keep the newest entries, recording the evicted ones."""
        cap = self.config.hive_max_entries if self.tier == "hive" else self.config.swarm_max_entries
        size = len(self.mirror)
        if cap is None or size <= cap * (1.0 + self.config.fifo_trim_slack):
            return 0
        oldest = list(self.mirror.slots)[: size - cap]
        self._rewrite(lease, removed=dict.fromkeys(oldest, "fifo_cap"))
        return len(oldest)

    def _reject(self, lease: Lease, entry: Entry, result: ValidationResult) -> AddResult:
        record = rejected_record(entry.id, entry.lesson, result.reason or "", result.layer or 1, self.now())
        self._append_sidecar(self.files.rejected, [record], self.config.rejected_max_entries, lease)
        return AddResult("rejected", entry, result, result.reason)

    def _append_sidecar(self, path: Any, records: builtins.list[Any], cap: int | None,
                        lease: Lease | None) -> None:
        append_capped(path, records, cap=cap, at=self.now(), evicted_to=self.files.evicted,
                      corrupt_to=self.files.corrupt, lease=lease)

    # -- adding and reinforcing -------------------------------------------------------------------

    def add(self, new: NewLesson, *, phase: int | None = None) -> AddResult:
        """Validate, then reinforce an active near-duplicate or append a new entry."""
        with self.locked() as lease:
            return self._add_locked(new, phase, lease)

    def add_many(self, lessons: Iterable[NewLesson], *, phase: int | None = None) -> builtins.list[AddResult]:
        """Several adds under one lock (each sees the ones before it)."""
        with self.locked() as lease:
            results = [self._add_locked(new, phase, lease) for new in lessons]
            return results

    def _add_locked(self, new: NewLesson, phase: int | None, lease: Lease) -> AddResult:
        at = self.now()
        entry = new_entry(new, tier=self.tier, project_name=self.project_name, phase=phase,
                          at=at, config=self.config)
        check = ValidationResult(True)
        if self.config.validation_enabled:
            for result in (
                check_structure(entry.lesson, entry.get("category"), entry.get("scope"),
                                entry.get("confidence")),
                check_safety(entry.lesson, self.config.validation_mode),
            ):
                if not result.valid:
                    return self._reject(lease, entry, result)
                if result.severity is not None:
                    check = result  # a warning: stored, flagged for review
            errors = validate_directive_fields(entry.data)
            if errors:
                return self._reject(lease, entry, ValidationResult(
                    False, 1, "invalid directive fields: " + "; ".join(errors), "error"))
        duplicate = self._find_duplicate(entry.lesson, True, None)
        if duplicate is not None:
            if phase is None:
                return AddResult("duplicate", duplicate, check, f"near-duplicate of {duplicate.id}")
            outcome = self._reinforce_locked(duplicate.id, phase, lease, at)
            kind: AddOutcome = (
                "reinforced" if outcome.outcome == "reinforced"
                else "already_confirmed_phase" if outcome.outcome == "already_confirmed_phase"
                else "duplicate"
            )
            return AddResult(kind, outcome.entry, check, f"near-duplicate of {duplicate.id}")
        if self.config.validation_enabled and check.severity is None:
            check = check_semantics(entry.lesson, self.contradictions(), self.config.validation_mode)
        if new.require_actionable:
            reason = check_actionability(entry.data)
            if reason is not None:
                held = entry.changed({"status": Status.QUARANTINED_UNACTIONABLE.value,
                                      "unactionable_reason": reason, "quarantined_at": at},
                                     bump_revision=False)
                self._append_sidecar(self.files.unactionable, [held.line()],
                                     self.config.unactionable_max_entries, lease)
                return AddResult("unactionable", held, check, reason)
        self._append([entry], lease)
        self._trim(lease)
        return AddResult("added", entry, check)

    def reinforce(self, entry_id: str, phase: int, *, project_name: str | None = None) -> ReinforceResult:
        """Confirm an entry in ``phase`` (idempotent within a phase)."""
        with self.locked() as lease:
            return self._reinforce_locked(entry_id, phase, lease, self.now(), project_name)

    def _reinforce_locked(self, entry_id: str, phase: int, lease: Lease, at: str,
                          project_name: str | None = None) -> ReinforceResult:
        slot = self.mirror.by_id.get(entry_id)
        if slot is None:
            return ReinforceResult("not_found", None)
        entry = self.mirror.slots[slot]
        confirmation = phase_confirmation(phase, at, project_name or self.project_name)
        changed, outcome = reinforce_entry(entry, confirmation,
                                           max_confirmed_by=self.config.max_confirmed_by)
        if outcome == "reinforced":
            self._rewrite(lease, replaced={slot: changed})
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
        from swarmq.memory.knowledge.quarantine import quarantine

        return quarantine(self, entry_id, reason, reported_by)

    def restore(self, entry_id: str, *, revalidate: bool = False) -> Entry:
        """Restore a quarantined entry where it was (re-validated only when asked) or revive an
        archived one."""
        from swarmq.memory.knowledge.quarantine import restore

        return restore(self, entry_id, revalidate=revalidate)
