"""Group commit of knowledge adds: concurrent adds to one store share one lock hold, one write
and one fsync, the way databases group-commit.

Every thread of a process that adds to a store queues its request on the store's
:class:`GroupCommit` (one per mirror, so one per store file and process). Whoever finds no
leader becomes it: it takes the store lock once, decides every queued add in order with
:class:`AddBatch` (each add sees the ones before it, so every decision is the one the adds
would get one by one in that order), writes all of them in one append + fsync (or one rewrite
when an add reinforced an entry) and only then acknowledges every caller. Requests that arrive
meanwhile form the next group, which the leader commits under the same lock hold and fencing
token (for at most :data:`HOLD_SECONDS`): one lock round trip and one fence record per hold,
one write + fsync and one lease validation per group, and one confirmation unless the next
group's validation gives it (:mod:`.folding`). Across processes the
store lock serialises holds and each process follows the others' appends incrementally
(:mod:`.loaded`).

A crash before the write loses only unacknowledged adds; a failed write fails every add of its
group (none was acknowledged) and ends the hold, so no lost write ever turns into a success.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swarmq.memory.atomic import commit_locked
from swarmq.memory.knowledge.contradiction import opposes_any
from swarmq.memory.knowledge.dedup import cached_bigrams
from swarmq.memory.knowledge.folding import FoldedLease, unconfirmed
from swarmq.memory.knowledge.loaded import LoadedFile
from swarmq.memory.knowledge.model import Entry
from swarmq.memory.knowledge.prepare import Prepared
from swarmq.memory.knowledge.reinforcement import (
    phase_confirmation,
    reinforce_entry,
)
from swarmq.memory.knowledge.sidecars import rejected_record
from swarmq.memory.knowledge.transaction import Transaction
from swarmq.memory.knowledge.validation import (
    REASON_CONTRADICTION,
    ValidationResult,
)
from swarmq.memory.locking import Lease
from swarmq.memory.similarity.text import jaccard

if TYPE_CHECKING:
    from swarmq.memory.knowledge.tierfile import TierFile

AddOutcome = Literal[
    "added", "reinforced", "already_confirmed_phase", "duplicate", "rejected", "unactionable"
]

MAX_GROUP = 256
"""Most adds decided and written as one group (bounds how long one group keeps others waiting)."""

HOLD_SECONDS = 0.02
"""How long a leader may keep the store lock for consecutive groups while adds keep queueing;
then it releases it, so other processes (and this one's readers) get their turn."""

LINGER_SECONDS = 0.002
"""How long a holding leader waits for the callers it just answered to add again (a full
group) before it writes what has queued; with nothing queued it then releases the lock."""


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


def _held_lock() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


@dataclass
class _Request:
    add: Prepared
    result: AddResult | None = None
    error: BaseException | None = None
    done: bool = False
    owner: int = field(default_factory=threading.get_ident)
    """The thread that asked: a leader lingers only for other threads, never for itself."""
    wake: threading.Lock = field(default_factory=_held_lock)
    """Released once, when the add is answered or its caller is handed the lead: each caller
    sleeps on its own lock, so answering a group wakes that group's callers and nobody else."""

    def answer(self) -> AddResult:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class GroupCommit:
    """The queue of adds waiting for one store's lock in this process."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._arrived = threading.Condition(self._mutex)  # wakes a lingering leader
        self._queue: list[_Request] = []
        self._leading = False

    def submit(self, add: Prepared) -> AddResult:
        """Queue a prepared add; returns once it is durable (or raises)."""
        request = _Request(add)
        with self._mutex:
            self._queue.append(request)
            self._arrived.notify()
            follow, self._leading = self._leading, True
        if follow:
            request.wake.acquire()  # answered, or handed the lead by the leader before
            if request.done:
                return request.answer()
        with self._mutex:
            group = self._take()
        try:
            self._lead(add.store, group)
        finally:
            self._hand_over()
        return request.answer()

    def _hand_over(self) -> None:
        """Make the first queued caller the leader (``_leading`` stays set), or nobody."""
        with self._mutex:
            if self._queue:
                self._queue[0].wake.release()
            else:
                self._leading = False

    def _take(self) -> list[_Request]:
        """The next group (call with ``_mutex`` held)."""
        group, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
        return group

    def _lead(self, store: TierFile, group: list[_Request]) -> None:
        """Commit ``group``, then, under the same lock hold and fencing token, every group that
        queued meanwhile, for at most :data:`HOLD_SECONDS`: one lock round trip and one fence
        record per hold, one write + fsync per group. A group is acknowledged once its write is
        confirmed: by the next group's validation when that one was already queued
        (:mod:`.folding`), else by a confirmation of its own."""
        waiting: list[_Request] = []  # written, acknowledged once their write is confirmed
        lease: FoldedLease | None = None
        try:
            with store.locked() as held, commit_locked(store.files.knowledge):
                leader, current = threading.get_ident(), group
                ready = partial(self._next_ready, lambda: current, leader)
                lease = FoldedLease(held, ready, partial(self._answer, waiting))
                started, position = time.monotonic(), 0
                while group:
                    current = group
                    run_group(store, lease, group, position)
                    position += len(group)
                    waiting += group
                    answered = len(group)
                    others = any(item.owner != leader for item in group)
                    group = []
                    if time.monotonic() - started >= HOLD_SECONDS:
                        break  # let other processes (and this one's readers) have the store
                    if lease.settled:
                        self._answer(waiting)  # a group that wrote nothing waits for no one
                    with self._mutex:
                        # The callers just answered usually add again within a prepare's time:
                        # wait for as many adds (a group as big as the last one, one fsync for
                        # all), at most LINGER_SECONDS, rather than write them one by one. A
                        # group of the leader's own add alone has nobody to wait for (a lone
                        # writer would pay the linger on every add), and a group still waiting
                        # for its confirmation has nobody who could add again yet.
                        if others and not waiting:
                            self._arrived.wait_for(partial(self._queued, answered), LINGER_SECONDS)
                        group = self._take()
                    if group:
                        store.mirror.refresh()  # a no-op unless the lease was lost meanwhile
                lease.settle()
                self._answer(waiting)
        except Exception as exc:  # fails this group only: the groups before it are acknowledged
            for item in group:
                if item.result is None and item.error is None:
                    item.error = exc
            lost = unconfirmed(lease, exc) if waiting and lease is not None else None
            for item in waiting if lost is not None else ():
                item.result, item.error = None, item.error or lost
        finally:
            self._answer(waiting)
            self._answer(group)

    def _next_ready(self, current: Callable[[], list[_Request]], leader: int) -> bool:
        """Whether the next group is queued in full, so the leader takes it without lingering
        (then its validation can confirm the current group's write)."""
        group, queued = current(), len(self._queue)
        return queued > 0 and (queued >= len(group) or all(i.owner == leader for i in group))

    def _queued(self, count: int) -> bool:
        return len(self._queue) >= count

    def _answer(self, group: list[_Request]) -> None:
        """Wake the callers of ``group`` and empty it (an add left without an answer fails)."""
        leader = threading.get_ident()
        for item in group:
            if item.result is None and item.error is None:
                item.error = RuntimeError("the group commit leader failed")
            item.done = True
            if item.owner != leader:  # the leader's own add (it never sleeps on it)
                item.wake.release()
        group.clear()


def run_group(store: TierFile, lease: Lease, group: Sequence[_Request], start: int) -> None:
    """Decide and commit ``group`` under ``lease`` (store lock and ``mirror.mutex`` held, mirror
    refreshed); set each request's answer, ordered ``(fencing token, start + position)``. When
    the write fails, every request of the group gets its error and it is raised."""
    batch = AddBatch(store, lease)
    for item in group:
        try:
            item.result = batch.add(item.add)
        except Exception as exc:  # this add's own failure (nothing of it was queued)
            item.error = exc
    try:
        batch.commit()
    except BaseException as exc:
        for item in group:
            item.result, item.error = None, item.error or exc
        raise
    token = lease.fencing_token
    for position, item in enumerate(group, start):
        if item.result is not None:
            item.result = replace(item.result, order=(token, position))


_GROUPS: weakref.WeakKeyDictionary[LoadedFile, tuple[int, GroupCommit]] = (
    weakref.WeakKeyDictionary()
)
_GROUPS_LOCK = threading.Lock()


def group_for(mirror: LoadedFile, factory: Callable[[], GroupCommit] = GroupCommit) -> GroupCommit:
    """The group-commit queue of a store file in this process (a forked child gets its own)."""
    with _GROUPS_LOCK:
        found = _GROUPS.get(mirror)
        if found is None or found[0] != os.getpid():
            found = _GROUPS[mirror] = (os.getpid(), factory())
        return found[1]
