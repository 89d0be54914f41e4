"""Exactly one active beat per swarm, a standby on every other host.

Two beats would enqueue every nightly job twice, so the scheduler runs only while it holds the
swarm's Redis lease (renewed every quarter lease, compare-and-renew so an expired lease is never
stolen back). Every other beat is a standby: it polls the lease and takes over once it expires,
so a dead beat is replaced within one lease period plus one poll (celery-redbeat's lock is the
prior art). Each entry's last run time is kept in Redis, so the new holder neither repeats a run
the dead one made nor skips one that fell due while nobody held the lease.

Work only the active beat does besides its schedule goes in :meth:`SingleBeatScheduler.run_duties`;
the scheduler swarmq configures is :class:`swarmq.reaper.ReapingBeatScheduler`, which runs the
mission reaper there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
from typing import Any

from celery.beat import PersistentScheduler, ScheduleEntry

from swarmq.coord import keys
from swarmq.coord.cluster import current
from swarmq.coord.connection import TRANSIENT, lua_source
from swarmq.storage.clock import iso, parse_iso
from swarmq.workers.hosts import beat_stop_key

log = logging.getLogger(__name__)

LEASE_ENV = "SWARMQ_BEAT_LEASE_SECONDS"
DEFAULT_LEASE_SECONDS = 60


def lease_seconds() -> float:
    """The lease period (``$SWARMQ_BEAT_LEASE_SECONDS``, default 60; tests use a few seconds)."""
    raw = os.environ.get(LEASE_ENV)
    try:
        value = float(raw) if raw else DEFAULT_LEASE_SECONDS
    except ValueError:
        raise ValueError(f"{LEASE_ENV}={raw!r} is not a number of seconds") from None
    if not 1 <= value <= 3600:
        raise ValueError(f"{LEASE_ENV}={raw!r}: use 1 to 3600 seconds")
    return value


def last_runs_key(swarm: str) -> str:
    """Hash entry name → ISO time of its last run, shared by every beat of the swarm."""
    return f"{keys.beat_lock(swarm)}:last-run"


class SingleBeatScheduler(PersistentScheduler):  # type: ignore[misc]
    """A PersistentScheduler that runs entries only while it holds the swarm's beat lease."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held = False
        self._lease = lease_seconds()
        self._announced = False
        super().__init__(*args, **kwargs)

    def _roster(self) -> Any:
        return self.app.swarmq_roster()

    def _lease_key(self) -> str:
        return keys.beat_lock(self._roster().swarm)

    def _client(self) -> Any:
        return current(self._roster().cluster_config()).client

    @property
    def poll_seconds(self) -> float:
        return max(0.5, min(5.0, self._lease / 6))

    # -- the lease ---------------------------------------------------------------------------

    def setup_schedule(self) -> None:
        super().setup_schedule()
        try:
            self._try_acquire()
        except TRANSIENT as exc:
            log.warning("beat: Redis unavailable (%s); standing by", exc)

    def _try_acquire(self) -> bool:
        client = self._client()
        taken = client.set(self._lease_key(), self._holder, nx=True, ex=int(self._lease))
        if not taken:
            holder = client.get(self._lease_key())
            shown = holder.decode() if isinstance(holder, bytes) else holder
            # Our own SET whose answer was lost (a Redis killed between its AOF fsync and its
            # reply): the lease is ours, not another beat's to wait out.
            taken = shown == self._holder
        if taken:
            self._held = True
            self._adopt_last_runs()
            log.warning(
                "beat: holding the lease of swarm %s as %s; running the schedule",
                self._roster().swarm,
                self._holder,
            )
            return True
        if not self._announced:
            log.warning(
                "beat: standby; another beat holds the lease (%s); taking over if it stops", shown
            )
            self._announced = True
        return False

    def _renew(self) -> None:
        client = self._client()
        renew = lua_source("lock_renew")  # the lease is a lock: compare-and-renew, in ms
        if not client.eval(renew, 1, self._lease_key(), self._holder, int(self._lease) * 1000):
            self._held = False
            self._announced = False
            log.warning("beat: lost the lease (expired or taken over); standing by")

    def _adopt_last_runs(self) -> None:
        """Take each entry's last run from Redis: every run by any beat is recorded there, so it
        is the truth (another beat may have run it since, or nobody while the lease was free)."""
        stored = self._client().hgetall(last_runs_key(self._roster().swarm))
        changed = False
        for raw_name, raw_when in stored.items():
            name = raw_name.decode() if isinstance(raw_name, bytes) else str(raw_name)
            entry = self.schedule.get(name)
            if entry is None:
                continue
            try:
                when = parse_iso(
                    raw_when.decode() if isinstance(raw_when, bytes) else str(raw_when)
                )
            except ValueError:
                continue
            if entry.last_run_at != when:  # Redis has every beat's runs; a local time may be a
                entry.last_run_at = when  # default ("now" at creation) or another era's
                changed = True
        if changed:
            self._heap = None  # rebuilt from the adopted times on the next tick

    def apply_entry(self, entry: ScheduleEntry, producer: Any = None) -> None:
        super().apply_entry(entry, producer=producer)
        try:
            self._client().hset(last_runs_key(self._roster().swarm), entry.name, iso())
        except TRANSIENT as exc:
            log.warning("beat: cannot record the run of %s (%s)", entry.name, exc)

    # -- the loop ----------------------------------------------------------------------------

    def tick(self, *args: Any, **kwargs: Any) -> float:
        try:
            if self._client().exists(beat_stop_key(self._roster().swarm)):
                log.warning("beat: `swarmq down --all` asked every beat to stop; exiting")
                raise SystemExit(0)
            if self._held:
                self._renew()
            if not self._held and not self._try_acquire():
                return self.poll_seconds
        except TRANSIENT as exc:
            log.warning("beat: cannot reach Redis for the lease (%s); will retry", exc)
            return self.poll_seconds
        interval: float = super().tick(*args, **kwargs)
        return min(interval, self._lease / 4, self.run_duties())

    def run_duties(self) -> float:
        """Work only the active beat does besides its schedule; seconds until it is due again.

        None here: the mission reaper (:class:`swarmq.reaper.ReapingBeatScheduler`) adds itself
        from the layer above, since resuming a mission is the mission client's job.
        """
        return float("inf")

    def close(self) -> None:
        try:
            super().close()
        finally:
            # Released by token whether or not ``_held`` caught up: a stop signal that lands
            # between the SET that took the lease and its answer leaves the lease ours in Redis
            # with ``_held`` still False, and the standby would wait out a whole lease for it.
            # Compare-and-delete, so a lease another beat holds is never touched.
            with contextlib.suppress(*TRANSIENT):
                self._client().eval(lua_source("lock_release"), 1, self._lease_key(), self._holder)
            self._held = False
