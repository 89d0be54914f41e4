"""The cluster-wide daily quota gate for LLM calls.

Three operations, one Lua script and one round trip each:

* ``reserve`` holds a slot when ``used + held < max`` in the current window, with a lease that
  returns the slot if the holder dies;
* ``start`` turns the reservation into a used call just before the request goes out; from then
  on nothing refunds it (a failed call still cost money);
* ``release`` gives back a reservation that never started; it is idempotent.

Every start is appended to a start journal on disk *before* Redis counts it (one small write,
see :class:`~swarmq.coord.quota_file.StartJournal`), usage is mirrored to opencode-swarm's
quota files behind the gate, and a Redis that lost its keys is re-seeded from the larger of the
two, so neither a Redis restart nor a wipe right after a start ever grants extra calls. When Redis cannot be
reached the gate fails closed: it raises :class:`QuotaUnavailable` and grants nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from functools import partial
from pathlib import Path
from typing import Any

import redis

from swarmq.coord import keys
from swarmq.coord._quota_slot import QuotaSlot
from swarmq.coord._windows import Window, WindowCache, zone_for
from swarmq.coord.connection import TRANSIENT, asked_again, redact, run_script, script
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_file import (
    JOURNAL_DIR,
    MirrorWriter,
    StartJournal,
    quota_file_name,
    used_in_window,
)
from swarmq.coord.quota_types import (
    LeaseLost,
    QuotaError,
    QuotaExhausted,
    QuotaStatus,
    QuotaUnavailable,
    Reservation,
    ScriptCall,
)
from swarmq.storage.atomic import SIDE_DIR

__all__ = ["GRACE_MS", "QuotaGate", "flush_mirrors"]

GRACE_MS = 2 * 86_400_000
"""Window keys outlive their day by two days, enough for late starts and for inspection."""


_shared_writer = MirrorWriter()
"""One write-behind thread per process for every gate's mirrors."""


def flush_mirrors() -> None:
    """Write every pending quota mirror of this process (call before a process exits)."""
    _shared_writer.flush()


class QuotaGate:
    """Reserve / start / release against Redis, with an on-disk mirror per quota."""

    def __init__(
        self,
        client: redis.Redis,
        swarm: str,
        quotas: Mapping[str, QuotaConfig],
        *,
        mirror_dir: Path | None = None,
        url: str = "redis",
        zones: Mapping[str, tzinfo] | None = None,
        clock: Callable[[], datetime] | None = None,
        mirror_writer: MirrorWriter | None = None,
    ) -> None:
        self.client = client
        self.swarm = swarm
        self.quotas = dict(quotas)
        self.mirror_dir = mirror_dir
        self.url = redact(url)
        zones = zones or {}
        self.mirror = mirror_writer or _shared_writer
        self.journal = (
            None if mirror_dir is None else StartJournal(mirror_dir / SIDE_DIR / JOURNAL_DIR)
        )
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self._system_clock = clock is None
        self._skew_ms = 0
        self._pruned: dict[str, str] = {}
        self._encoded: dict[str, tuple[tuple[Window, Window, Window], list[bytes], bytes]] = {}
        self._windows = {
            name: WindowCache(zones.get(name) or zone_for(cfg)) for name, cfg in self.quotas.items()
        }
        self._reserve = script(client, "quota_reserve")
        self._start = script(client, "quota_start")
        self._release = script(client, "quota_release")
        self._renew = script(client, "quota_renew")
        self._status = script(client, "quota_status")

    # -- helpers -----------------------------------------------------------------------------

    def config(self, name: str) -> QuotaConfig:
        try:
            return self.quotas[name]
        except KeyError:
            known = ", ".join(sorted(self.quotas)) or "none"
            raise QuotaError(f"unknown quota {name!r}; configured quotas: {known}") from None

    def mirror_path(self, name: str) -> Path | None:
        return None if self.mirror_dir is None else self.mirror_dir / quota_file_name(name)

    def _unavailable(self, action: str, exc: BaseException) -> QuotaUnavailable:
        return QuotaUnavailable(
            f"quota gate cannot {action}: Redis at {self.url} is unreachable ({exc}); "
            "failing closed, no LLM call is allowed"
        )

    def _args(self, name: str, windows: tuple[Window, Window, Window]) -> tuple[list[bytes], bytes]:
        """Keys and the packed fixed argument of the current window, encoded once per day.

        ``quota_reserve.lua`` takes the window bounds, expiry, max and lease as one string
        (``<prefix><seed>``): each separate argument costs the client more than the parse.
        """
        cached = self._encoded.get(name)
        if cached is not None and cached[0] is windows:
            return cached[1], cached[2]
        cfg = self.config(name)
        window = windows[1]
        window_keys = [
            keys.quota_used(self.swarm, name, window.key).encode(),
            keys.quota_held(self.swarm, name, window.key).encode(),
        ]
        values = (
            window.start_ms,
            window.end_ms,
            window.end_ms + GRACE_MS,
            cfg.max_calls_per_day,
            int(cfg.lease_seconds * 1000),
        )
        prefix = (" ".join(map(str, values)) + " ").encode()
        self._encoded[name] = (windows, window_keys, prefix)
        return window_keys, prefix

    def _confirmed(self, name: str, windows: tuple[Window, Window, Window]) -> None:
        """Redis ``TIME`` fell inside ``windows[1]``: days before its yesterday are over.

        Only a window the server's clock confirmed may prune start journals; a host whose own
        clock is days off would otherwise delete the journals of the day still being spent.
        """
        if self.journal is None or self._pruned.get(name) == windows[1].key:
            return
        self._pruned[name] = windows[1].key
        with contextlib.suppress(OSError):
            self.journal.prune(name, before=windows[0].key)

    def _window_keys(self, reservation: Reservation) -> tuple[bytes, bytes]:
        if reservation.keys[0]:
            return reservation.keys
        name, day = reservation.name, reservation.window.key
        return (
            keys.quota_used(self.swarm, name, day).encode(),
            keys.quota_held(self.swarm, name, day).encode(),
        )

    def _now_ms(self) -> int:
        """This host's clock in epoch ms, corrected by the offset to Redis's clock seen so far."""
        if self._system_clock:
            return int(time.time() * 1000) + self._skew_ms
        return int(self.clock().timestamp() * 1000) + self._skew_ms

    def _now(self) -> datetime:
        """This host's clock, corrected by the offset to Redis's clock seen so far."""
        return self.clock() + timedelta(milliseconds=self._skew_ms)

    def _check_skew(self, name: str, redis_ms: int) -> None:
        """Remember this host's offset to Redis ``TIME``; refuse past ``max_clock_skew_seconds``."""
        skew = redis_ms - int(self.clock().timestamp() * 1000)
        bound = self.config(name).max_clock_skew_seconds
        if abs(skew) > bound * 1000:
            raise QuotaUnavailable(
                f"quota {name!r}: this host's clock is {abs(skew) / 1000:.0f} s away from the "
                f"Redis server's at {self.url} (max_clock_skew_seconds: {bound:g}); refusing "
                "to reserve until the clocks agree"
            )
        self._skew_ms = skew

    def _seed(self, name: str, window: Window) -> int:
        """Calls started in ``window`` as the disk records them: the start journal (written
        before each start counted) or the mirror, whichever says more."""
        path = self.mirror_path(name)
        if path is None or self.journal is None:
            return 0
        self.mirror.flush()
        mirrored = used_in_window(path, window.key, self.config(name).window.value)
        try:
            journaled = self.journal.count(name, window.key)
        except OSError as exc:
            raise QuotaUnavailable(
                f"quota {name!r}: cannot read the start journal in {self.journal.directory} "
                f"({exc}); refusing to re-seed the window blind"
            ) from exc
        return max(mirrored, journaled)

    def flush_mirror(self) -> None:
        """Write pending quota mirrors now (workers call it when a process shuts down)."""
        self.mirror.flush()

    # -- the three operations ----------------------------------------------------------------

    def reserve_call(self, name: str) -> ScriptCall:
        """The first reserve round trip, for callers that pipeline it with other commands."""
        windows = self._windows[name].at_ms(self._now_ms())
        window_keys, prefix = self._args(name, windows)
        token = os.urandom(12).hex()
        return ScriptCall(self._reserve.sha, window_keys, [prefix + b"-1", token], token, windows)

    def reserve_outcome(self, name: str, call: ScriptCall, reply: Any) -> Reservation | None:
        """Interpret a reserve reply: a reservation, ``None`` (ask :meth:`reserve`: re-seed or
        another window), or :class:`QuotaExhausted`."""
        status, second, held = reply
        windows = call.windows
        if status == 1:
            self._confirmed(name, windows)
            return Reservation(name, call.token, windows[1], second, (call.keys[0], call.keys[1]))
        if status == 0:
            self._confirmed(name, windows)
            raise QuotaExhausted.of(
                name, windows[1], second, held, self.config(name).max_calls_per_day
            )
        return None

    def reserve(self, name: str) -> Reservation:
        """Hold one slot of ``name`` or raise :class:`QuotaExhausted` / :class:`QuotaUnavailable`."""
        self.config(name)
        cache = self._windows[name]
        call = self.reserve_call(name)
        for _ in range(4):
            try:
                # Asked again after a lost answer: the script finds the token it already holds
                # and answers with that lease, so one reservation never holds two slots.
                reply = asked_again(
                    partial(run_script, self.client, self._reserve, call.keys, call.args)
                )
            except TRANSIENT as exc:
                raise self._unavailable(f"reserve {name!r}", exc) from exc
            reservation = self.reserve_outcome(name, call, reply)
            if reservation is not None:
                return reservation
            status, second, _held = reply
            if status == 2:  # the window's counter is missing: re-seed it from the disk mirror
                seed = self._seed(name, call.windows[1])
                _keys, prefix = self._args(name, call.windows)
                call = ScriptCall(
                    call.sha,
                    call.keys,
                    [prefix + str(seed).encode(), call.token],
                    call.token,
                    call.windows,
                )
                continue
            # Redis's clock says another day: it decides. Remember the offset for next time.
            self._check_skew(name, second)
            windows = cache.at_ms(second)
            window_keys, prefix = self._args(name, windows)
            call = ScriptCall(
                call.sha, window_keys, [prefix + b"-1", call.token], call.token, windows
            )
        raise QuotaUnavailable(
            f"quota {name!r}: could not agree on a window with Redis"
        )  # pragma: no cover

    def start(self, reservation: Reservation) -> int:
        """Count the call; returns calls used in the reservation's window."""
        name, window = reservation.name, reservation.window
        if self.journal is not None:
            try:
                self.journal.started(name, window.key, reservation.token)
            except OSError as exc:
                raise QuotaUnavailable(
                    f"quota {name!r}: cannot record the start in {self.journal.directory} "
                    f"({exc}); failing closed, no LLM call is allowed"
                ) from exc
        used_key, held_key = self._window_keys(reservation)
        start_keys = [
            used_key,
            held_key,
            keys.quota_started(self.swarm, name, window.key, reservation.token),
        ]
        start_args = [reservation.token]
        try:
            # Asked again after a lost answer: the receipt gives the first answer, so the call is
            # counted once and still goes out (a refused start would have spent a slot for nothing).
            status, used = asked_again(
                lambda: run_script(self.client, self._start, start_keys, start_args)
            )
        except TRANSIENT as exc:
            raise self._unavailable(f"start {name!r}", exc) from exc
        if status != 1:
            if self.journal is not None:
                with contextlib.suppress(OSError):  # left in, it only over-counts
                    self.journal.refused(name, window.key, reservation.token)
            why = "it is no longer held (released, or its lease ran out and the slot went back to the pool)"
            raise LeaseLost(
                f"quota {name!r}: cannot start reservation {reservation.token[:8]}: {why}"
            )
        path = self.mirror_path(name)
        if path is not None:
            cfg = self.config(name)
            self.mirror.record(
                path,
                window_key=window.key,
                window=cfg.window.value,
                calls_used=int(used),
                max_calls=cfg.max_calls_per_day,
            )
        return int(used)

    def release(self, reservation: Reservation) -> bool:
        """Return a never-started slot; ``False`` if it was already gone (idempotent)."""
        key = self._window_keys(reservation)[1]
        try:
            return bool(self._release(keys=[key], args=[reservation.token]))
        except TRANSIENT as exc:
            raise self._unavailable(f"release {reservation.name!r}", exc) from exc

    def renew(self, reservation: Reservation) -> Reservation:
        """Extend a reservation's lease (for long preparations before the call)."""
        cfg = self.config(reservation.name)
        key = self._window_keys(reservation)[1]
        try:
            until = int(
                self._renew(keys=[key], args=[reservation.token, int(cfg.lease_seconds * 1000)])
            )
        except TRANSIENT as exc:
            raise self._unavailable(f"renew {reservation.name!r}", exc) from exc
        if not until:
            raise LeaseLost(
                f"quota {reservation.name!r}: reservation {reservation.token[:8]} is gone"
            )
        return Reservation(
            reservation.name, reservation.token, reservation.window, until, reservation.keys
        )

    @contextlib.contextmanager
    def slot(self, name: str) -> Iterator[QuotaSlot]:
        """``with gate.slot("enrichment") as slot: ...; slot.start(); call()``.

        Leaving the block without ``start()`` (an exception while preparing, or nothing to send)
        releases the slot; after ``start()`` the call stays counted whatever happens.
        """
        holder = QuotaSlot(self, self.reserve(name))
        with holder:
            yield holder

    def status(self, name: str) -> QuotaStatus:
        cfg = self.config(name)
        for _ in range(2):  # a second read only when this host's clock was days off
            windows = self._windows[name].current(self._now())
            window_keys = [
                keys.quota_used(self.swarm, name, w.key)
                if i % 2 == 0
                else keys.quota_held(self.swarm, name, w.key)
                for w in windows
                for i in (0, 1)
            ]
            bounds = [
                windows[0].start_ms,
                windows[1].start_ms,
                windows[2].start_ms,
                windows[2].end_ms,
            ]
            try:
                index, used, held, redis_ms = self._status(keys=window_keys, args=bounds)
            except TRANSIENT as exc:
                raise self._unavailable(f"read quota {name!r}", exc) from exc
            if index >= 0:
                break
            self._check_skew(name, int(redis_ms))  # read the day Redis's clock is in
        else:  # pragma: no cover - Redis's clock jumped days between two reads
            raise QuotaUnavailable(f"quota {name!r}: could not agree on a window with Redis")
        window = windows[index]
        if used < 0:
            used = self._seed(name, window)
        zone = self._windows[name].zone
        return QuotaStatus(
            name,
            cfg.window.value,
            str(zone),
            window.key,
            int(used),
            int(held),
            cfg.max_calls_per_day,
            window.resets_at,
        )

    def statuses(self) -> list[QuotaStatus]:
        return [self.status(name) for name in sorted(self.quotas)]
