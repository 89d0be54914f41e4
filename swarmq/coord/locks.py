"""Store locks in Redis: a unique owner token, a bounded lease a watchdog renews while held,
owner-only release, and a fencing token (monotonic per resource) checked before every commit.

This implements :class:`swarmq.storage.locking.StoreLocks`, so domain code takes it without
knowing Redis exists. The commit step itself (fence check + replace) runs under a same-host
file lock in :mod:`swarmq.storage.atomic`.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import redis

from swarmq.coord import keys
from swarmq.coord.connection import TRANSIENT, redact, run_script, script
from swarmq.storage.locking import CommitUnconfirmed, FencedOff, Lease, LockError, LockTimeout

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_BACKOFF_SECONDS = 0.025
"""Longest pause between tries for a held lock. Store critical sections last milliseconds, so a
long pause mostly idles the waiter after the holder is gone; a few hundred polls a second are
nothing to Redis."""

FENCE_TTL_SECONDS = 600.0
"""How long a fencing counter outlives the last acquire or validate of its lock. Files record
the largest token that wrote them and a restarted counter is moved past it, so expiry is safe
and keeps Redis from holding one counter per file ever locked."""

RECEIPT_MARGIN_SECONDS = 60.0
"""Beyond the lease and the outage grace, how long a release's receipt lasts: the last ask of
:meth:`RedisLocks.patiently` may start just before the grace ends and wait on a connect."""


class RedisUnreachable(LockError):
    """The lock could not be tried at all: Redis did not answer (nothing was held or written)."""


class RedisLease:
    """A held Redis lock. ``validate`` proves ownership in Redis right before a commit."""

    def __init__(self, owner: RedisLocks, resource: str, token: str, fencing_token: int) -> None:
        self._owner = owner
        self.resource = resource
        self.token = token
        self.fencing_token = fencing_token
        self.lost = threading.Event()
        self.confirm_pending = False
        """A commit made under this lease is confirmed by its release (:meth:`confirm_at_release`)."""

    def validate(self, recorded_token: int) -> int:
        if self.lost.is_set():
            raise FencedOff(f"{self.resource}: the lock's lease lapsed; refusing to write")
        owner = self._owner
        try:
            status, token = owner.patiently(  # once per group commit: no Script bookkeeping
                lambda: run_script(
                    owner.client,
                    owner._validate,
                    [keys.lock(owner.swarm, self.resource), keys.fence(owner.swarm, self.resource)],
                    [self.token, self.fencing_token, recorded_token, owner.fence_ttl_ms],
                ),
                self.resource,
            )
        except TRANSIENT as exc:
            raise FencedOff(
                f"{self.resource}: cannot confirm the lock with Redis at {self._owner.url} ({exc}); "
                "refusing to write"
            ) from exc
        if status == 0:
            self.lost.set()
            raise FencedOff(
                f"{self.resource}: lease lapsed and the lock now belongs to another holder "
                f"(my fencing token {self.fencing_token}, recorded {recorded_token}); write refused"
            )
        self.fencing_token = int(token)
        return self.fencing_token

    def confirm(self) -> None:
        owner = self._owner
        try:
            held = owner.patiently(
                lambda: owner.client.get(keys.lock(owner.swarm, self.resource)), self.resource
            )
        except TRANSIENT as exc:
            raise self._unanswered(exc) from exc
        self._check_held(held)

    def start_confirm(self) -> Callable[[], None]:
        """Send the confirmation's GET now on a connection of the pool and read the answer when
        the returned function is called (an fsync runs in between); a connection that fails to
        send falls back to :meth:`confirm`, with the client's reconnect and retries."""
        pool, key = self._owner.client.connection_pool, keys.lock(self._owner.swarm, self.resource)
        try:
            conn = pool.get_connection()
        except TRANSIENT:
            return self.confirm
        try:
            conn.send_command("GET", key)  # type: ignore[no-untyped-call]
        except BaseException as exc:
            conn.disconnect()  # type: ignore[no-untyped-call]
            pool.release(conn)
            if isinstance(exc, TRANSIENT):
                return self.confirm
            raise

        def finish() -> None:
            try:
                held = conn.read_response()
            except BaseException as exc:
                conn.disconnect()  # type: ignore[no-untyped-call]  # answer unread: never reuse
                pool.release(conn)
                if isinstance(exc, TRANSIENT):
                    if self._owner.outage_grace_seconds > 0:
                        self.confirm()  # a read: asked again once Redis is back
                        return
                    raise self._unanswered(exc) from exc
                raise
            pool.release(conn)
            self._check_held(held)

        return finish

    def _unanswered(self, exc: BaseException) -> CommitUnconfirmed:
        return CommitUnconfirmed(
            f"{self.resource}: written, but Redis at {self._owner.url} did not answer to "
            f"confirm the lock ({exc}); the write may be overwritten: re-check it"
        )

    def _check_held(self, held: Any) -> None:
        if (held.decode() if isinstance(held, bytes) else held) != self.token:
            self.lost.set()
            raise CommitUnconfirmed(
                f"{self.resource}: written after the lock's lease lapsed (a holder stalled "
                "between its fence check and its rename); another holder may overwrite it: "
                "re-check it under a fresh lock"
            )

    def confirm_at_release(self) -> None:
        """Confirm the commit just made by the release that follows it: the release script
        deletes the lock only while it holds this token, which proves the lease held through
        the commit; :meth:`RedisLocks.hold` raises :class:`CommitUnconfirmed` otherwise."""
        self.confirm_pending = True

    def start_watchdog(self, lease_ms: int) -> None:
        self._owner.watchdog.add(self, lease_ms)

    def stop_watchdog(self) -> None:
        self._owner.watchdog.remove(self)


class Watchdog:
    """One thread per process renews every held lease at a third of its lease time.

    Two missed renewals still leave margin. A thread per lock would cost a thread start and
    join on every hold, which is most of the price of a short critical section.
    """

    def __init__(self) -> None:
        self._leases: dict[str, tuple[RedisLease, int, float]] = {}
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def add(self, lease: RedisLease, lease_ms: int) -> None:
        due = time.monotonic() + lease_ms / 3000.0
        with self._cv:
            if (
                self._pid != os.getpid()
            ):  # forked child: the parent's thread and leases are not ours
                self._pid, self._thread, self._leases = os.getpid(), None, {}
            earliest = min((entry[2] for entry in self._leases.values()), default=None)
            self._leases[lease.token] = (lease, lease_ms, due)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="lock-watchdog", daemon=True)
                self._thread.start()
            elif earliest is None or due < earliest:
                self._cv.notify()  # only when the thread must wake sooner than it planned

    def remove(self, lease: RedisLease) -> None:
        with self._cv:
            self._leases.pop(lease.token, None)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._leases:
                    self._cv.wait()
                now = time.monotonic()
                due = [entry for entry in self._leases.values() if entry[2] <= now]
                if not due:
                    self._cv.wait(min(entry[2] for entry in self._leases.values()) - now)
                    continue
                for lease, lease_ms, _ in due:
                    self._leases[lease.token] = (lease, lease_ms, now + lease_ms / 3000.0)
            for lease, lease_ms, _ in due:
                self._renew(lease, lease_ms)

    def _renew(self, lease: RedisLease, lease_ms: int) -> None:
        owner = lease._owner
        try:
            ok = owner._renew(
                keys=[keys.lock(owner.swarm, lease.resource)], args=[lease.token, lease_ms]
            )
        except TRANSIENT as exc:
            log.warning("lock %s: renewal failed (%s); will retry", lease.resource, exc)
            return
        if not ok:
            log.error("lock %s: lease lost before release; commits will be refused", lease.resource)
            lease.lost.set()
            self.remove(lease)


class RedisLocks:
    """Factory of Redis store locks for one swarm."""

    def __init__(
        self,
        client: redis.Redis,
        swarm: str,
        *,
        lease_seconds: float = 30.0,
        url: str = "redis",
        renew: bool = True,
        outage_grace_seconds: float = 0.0,
    ) -> None:
        self.client = client
        self.outage_grace_seconds = outage_grace_seconds
        """How long a lock call waits for an unreachable Redis to answer again (0: fail at once)."""
        self.swarm = swarm
        self.lease_ms = int(lease_seconds * 1000)
        self.fence_ttl_ms = max(int(FENCE_TTL_SECONDS * 1000), 10 * self.lease_ms)
        self.url = redact(url)
        self.renew = renew
        self.watchdog = _WATCHDOG
        self._acquire = script(client, "lock_acquire")
        self._renew = script(client, "lock_renew")
        self._release = script(client, "lock_release")
        self._validate = script(client, "lock_validate")

    def with_outage_grace(self, seconds: float) -> RedisLocks:
        """These locks (same client, scripts and watchdog), waiting up to ``seconds`` for an
        unreachable Redis at each step: for a long job that must not fail because Redis
        restarted under it (a mission run recording its agent's markers). Only reads and lock
        steps are asked again, each before or after the write it guards and never the write, so
        no write is repeated and none is turned into a success: a lease that lapsed meanwhile is
        still refused."""
        patient = copy.copy(self)
        patient.outage_grace_seconds = seconds
        return patient

    @property
    def receipt_ms(self) -> int:
        """How long a release's receipt lasts: longer than any resend of that release can come
        (:meth:`patiently` within the outage grace, a client's own retries)."""
        return self.lease_ms + int((self.outage_grace_seconds + RECEIPT_MARGIN_SECONDS) * 1000)

    def patiently(self, call: Callable[[], T], resource: str) -> T:
        """``call()``, asked again with backoff while Redis does not answer, within the grace."""
        deadline = time.monotonic() + self.outage_grace_seconds
        delay = 0.1
        while True:
            try:
                return call()
            except TRANSIENT as exc:
                if time.monotonic() + delay > deadline:
                    raise
                log.warning(
                    "lock %s: Redis at %s unreachable (%s); asking again in %.1fs",
                    resource,
                    self.url,
                    exc,
                    delay,
                )
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def acquire_call(self, resource: str) -> tuple[str, list[str], list[Any], str]:
        """One try for ``resource`` as ``(sha, keys, args, token)``, for callers that pipeline it."""
        token = uuid.uuid4().hex
        lock_keys = [keys.lock(self.swarm, resource), keys.fence(self.swarm, resource)]
        return self._acquire.sha, lock_keys, [token, self.lease_ms, self.fence_ttl_ms], token

    def adopt(self, resource: str, token: str, fencing_token: int) -> RedisLease:
        """The lease of a pipelined try that succeeded (its watchdog starts now)."""
        lease = RedisLease(self, resource, token, fencing_token)
        if self.renew:
            lease.start_watchdog(self.lease_ms)
        return lease

    def try_acquire(self, resource: str, *, patient: bool = False) -> RedisLease | None:
        """One try; ``patient`` waits out an outage within the grace first."""
        _sha, lock_keys, args, token = self.acquire_call(resource)
        try:
            if patient:
                fencing = int(
                    self.patiently(lambda: self._acquire(keys=lock_keys, args=args), resource)
                )
            else:
                fencing = int(self._acquire(keys=lock_keys, args=args))
        except TRANSIENT as exc:
            raise RedisUnreachable(
                f"cannot lock {resource!r}: Redis at {self.url} is unreachable ({exc})"
            ) from exc
        return RedisLease(self, resource, token, fencing) if fencing else None

    def acquire(self, resource: str, *, timeout: float | None = None) -> RedisLease:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.002
        while True:
            lease = self.try_acquire(resource, patient=timeout != 0)  # a one-try caller: one try
            if lease is not None:
                if self.renew:
                    lease.start_watchdog(self.lease_ms)
                return lease
            if deadline is not None and time.monotonic() >= deadline:
                raise LockTimeout(
                    f"could not lock {resource!r} within {timeout}s (held by another worker)"
                )
            pause = delay * (0.5 + random.random())
            if deadline is not None:
                pause = min(pause, max(0.0, deadline - time.monotonic()))
            time.sleep(pause)
            delay = min(delay * 2, MAX_BACKOFF_SECONDS)

    def release(self, lease: RedisLease) -> bool:
        """Whether the lock was still this lease's when released. A release that confirms a
        commit leaves a receipt, so the same release asked again after its answer was lost
        (:meth:`patiently`, or a client that retries) still says so, instead of turning the
        commit it confirms into :class:`CommitUnconfirmed`."""
        lease.stop_watchdog()
        lock_keys = [keys.lock(self.swarm, lease.resource)]
        args: list[Any] = [lease.token]
        if lease.confirm_pending:
            lock_keys.append(keys.released(self.swarm, lease.resource, lease.token))
            args.append(self.receipt_ms)
        try:
            released = self.patiently(
                lambda: self._release(keys=lock_keys, args=args), lease.resource
            )
        except TRANSIENT as exc:
            log.warning("lock %s: release failed (%s); the lease will expire", lease.resource, exc)
            return False
        if released == 2:
            log.info(
                "lock %s: released before Redis's answer was lost (its receipt says so)",
                lease.resource,
            )
        return bool(released)

    @contextlib.contextmanager
    def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
        lease = self.acquire(resource, timeout=timeout)
        try:
            yield lease
        finally:
            released = self.release(lease)
        if lease.confirm_pending and not released:  # only set by the body's last act: a commit
            lease.lost.set()
            raise CommitUnconfirmed(
                f"{resource}: written, but the lock was no longer this holder's at its release "
                f"(its lease lapsed, or Redis at {self.url} did not answer); another holder may "
                "overwrite it: re-check it under a fresh lock"
            )


_WATCHDOG = Watchdog()
