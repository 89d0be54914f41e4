"""Group commit of knowledge adds: concurrent adds to one store share one lock hold, one write
and one fsync, the way databases group-commit.

Every thread of a process that adds to a store queues its request on the store's
:class:`GroupCommit` (one per mirror, so one per store file and process) and sleeps. Its
committer thread takes the store lock once, prepares and decides every queued add in order with
:class:`AddBatch` (each add sees the ones before it, so every decision is the one the adds
would get one by one in that order), writes all of them in one append + fsync (or one rewrite
when an add reinforced an entry) and only then acknowledges every caller. Requests that arrive
meanwhile form the next group, which the committer commits under the same lock hold and fencing
token (for at most :data:`HOLD_SECONDS`): one lock round trip and one fence record per hold,
one write + fsync and one lease validation per group, and one confirmation unless the next
group's validation gives it (:mod:`._folding`). Across processes the store lock serialises holds
and each process follows the others' appends incrementally (:mod:`._loaded`).

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
from typing import TYPE_CHECKING

from swarmq.knowledge._folding import FoldedLease, unconfirmed
from swarmq.knowledge._loaded import LoadedFile
from swarmq.knowledge._prepare import prepare
from swarmq.knowledge.batch import AddBatch, AddResult
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.storage.atomic import commit_locked
from swarmq.storage.locking import Lease

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile

MAX_GROUP = 256
"""Most adds decided and written as one group (bounds how long one group keeps others waiting)."""

HOLD_SECONDS = 0.02
"""How long the committer may keep the store lock for consecutive groups while adds keep
queueing; then it releases it, so other processes (and this one's readers) get their turn."""

LINGER_SECONDS = 0.002
"""How long the holding committer waits for the callers it just answered to add again (a full
group) before it writes what has queued; with nothing queued it then releases the lock."""


def _held_lock() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


@dataclass
class _Request:
    store: TierFile
    new: NewLesson
    phase: int | None
    result: AddResult | None = None
    error: BaseException | None = None
    done: bool = False
    wake: threading.Lock = field(default_factory=_held_lock)
    """Released once, when the add is answered: each caller sleeps on its own lock, so
    answering a group wakes that group's callers and nobody else."""

    def answer(self) -> AddResult:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class GroupCommit:
    """The queue of adds waiting for one store's lock in this process, and its committer.

    The committer (one thread of an executor) takes the lock and commits the queue group by
    group while every caller only queues and sleeps. A caller that led instead stayed in the
    lead loop for the whole hold, so with eight writers one never added again until the hold
    ended (groups of seven, not eight). The executor's thread is joined at interpreter exit
    after the hold in progress ends, so no exit leaves the store lock held."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._arrived = threading.Condition(self._mutex)  # wakes a lingering committer
        self._queue: list[_Request] = []
        self._committing = False
        self._pending = 0
        from concurrent.futures import ThreadPoolExecutor  # only writers pay for the import

        self._executor = ThreadPoolExecutor(1, thread_name_prefix="swarmq-group-commit")

    @property
    def pending(self) -> int:
        """Adds queued or being committed (their callers wait)."""
        return self._pending

    def submit(self, store: TierFile, new: NewLesson, phase: int | None) -> AddResult:
        """Queue an add; returns once it is durable (or raises)."""
        request = _Request(store, new, phase)
        with self._mutex:
            self._pending += 1
            self._queue.append(request)
            self._arrived.notify()
            start, self._committing = not self._committing, True
        if start:
            try:
                self._executor.submit(self._commit)
            except RuntimeError:  # the interpreter is exiting: commit on this thread
                self._commit()
        request.wake.acquire()  # released once the add is answered
        with self._mutex:
            self._pending -= 1
        return request.answer()

    def _commit(self) -> None:
        """Commit until the queue is empty."""
        group: list[_Request] = []
        try:
            while True:
                with self._mutex:
                    group = self._take()
                    if not group:
                        self._committing = False
                        return
                self._lead(group[0].store, group)
        except BaseException as exc:  # never strand a caller: fail what is queued, then stop
            with self._mutex:
                stranded, self._queue, self._committing = self._queue, [], False
            for item in [*group, *stranded]:
                if item.result is None and item.error is None:
                    item.error = exc
            self._answer([*group, *stranded])
            raise

    def _take(self) -> list[_Request]:
        """The next group (call with ``_mutex`` held)."""
        group, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
        return group

    def _lead(self, store: TierFile, group: list[_Request]) -> None:
        """Commit ``group``, then, under the same lock hold and fencing token, every group that
        queued meanwhile, for at most :data:`HOLD_SECONDS`: one lock round trip and one fence
        record per hold, one write + fsync per group. A group is acknowledged once its write is
        confirmed: by the next group's validation when that one was already queued
        (:mod:`._folding`), else by a confirmation of its own."""
        waiting: list[_Request] = []  # written, acknowledged once their write is confirmed
        lease: FoldedLease | None = None
        try:
            with store.locked() as held, commit_locked(store.files.knowledge):
                current = group
                ready = partial(self._next_ready, lambda: current)
                lease = FoldedLease(held, ready, partial(self._answer, waiting))
                started, position = time.monotonic(), 0
                while group:
                    current = group
                    run_group(store, lease, group, position)
                    position += len(group)
                    waiting += group
                    answered = len(group)
                    group = []
                    if time.monotonic() - started >= HOLD_SECONDS:
                        break  # let other processes (and this one's readers) have the store
                    if lease.settled:
                        self._answer(waiting)  # a group that wrote nothing waits for no one
                    with self._mutex:
                        # The callers just answered usually add again at once: wait for them
                        # and the adds already queued (one group, one fsync for all), at most
                        # LINGER_SECONDS, rather than write them one by one. A group still
                        # waiting for its confirmation has nobody who could add again yet.
                        if not waiting:
                            expected = min(MAX_GROUP, len(self._queue) + answered)
                            self._arrived.wait_for(partial(self._queued, expected), LINGER_SECONDS)
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

    def _next_ready(self, current: Callable[[], list[_Request]]) -> bool:
        """Whether the next group is queued in full, so the committer takes it without
        lingering (then its validation can confirm the current group's write)."""
        queued = len(self._queue)
        return queued > 0 and queued >= len(current())

    def _queued(self, count: int) -> bool:
        return len(self._queue) >= count

    def _answer(self, group: list[_Request]) -> None:
        """Wake the callers of ``group`` and empty it (an add left without an answer fails)."""
        for item in group:
            if item.done:
                continue
            if item.result is None and item.error is None:
                item.error = RuntimeError("the group commit failed")
            item.done = True
            item.wake.release()
        group.clear()


def run_group(store: TierFile, lease: Lease, group: Sequence[_Request], start: int) -> None:
    """Decide and commit ``group`` under ``lease`` (store lock and ``mirror.mutex`` held, mirror
    refreshed); set each request's answer, ordered ``(fencing token, start + position)``. When
    the write fails, every request of the group gets its error and it is raised."""
    batch = AddBatch(store, lease)
    for item in group:
        try:  # prepared here, not by its caller: see prepare.py
            item.result = batch.add(prepare(item.store, item.new, item.phase))
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
