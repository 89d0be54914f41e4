"""The cluster-wide daily quota gate for LLM calls.

Three operations, one Lua script and one round trip each:

* ``reserve`` holds a slot when ``used + held < max`` in the current window, with a lease that
  returns the slot if the holder dies;
* ``start`` turns the reservation into a used call just before the request goes out; from then
  on nothing refunds it (a failed call still cost money);
* ``release`` gives back a reservation that never started; it is idempotent.

Usage is mirrored to opencode-swarm's quota files after every start, and a Redis that lost its
keys is re-seeded from them, so a Redis restart never grants extra calls. When Redis cannot be
reached the gate fails closed: it raises :class:`QuotaUnavailable` and grants nothing.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from types import TracebackType

import redis

from swarmq.coord import keys
from swarmq.coord.connection import TRANSIENT, redact, script
from swarmq.coord.windows import Window, WindowCache, zone_for
from swarmq.memory.quota_file import quota_file_name, record_usage, used_in_window
from swarmq.roster.schema import QuotaConfig

GRACE_MS = 2 * 86_400_000
"""Window keys outlive their day by two days, enough for late starts and for inspection."""


class QuotaError(RuntimeError):
    """Base of every quota refusal."""


class QuotaExhausted(QuotaError):
    """No slot left in the current window."""

    def __init__(
        self, name: str, window: str, used: int, held: int, maximum: int, resets_at: datetime
    ) -> None:
        self.name, self.window, self.used, self.held, self.max = name, window, used, held, maximum
        self.resets_at = resets_at
        super().__init__(
            f"daily quota {name!r} exhausted for {window}: used={used} held={held} max={maximum}; "
            f"resets at {resets_at.isoformat()}"
        )


class QuotaUnavailable(QuotaError):
    """The gate cannot decide (Redis unreachable, clock skew): it refuses, never grants."""


class LeaseLost(QuotaError):
    """``start`` on a reservation that expired, was released, or was lost with Redis's keys."""


@dataclass(frozen=True, slots=True)
class Reservation:
    """A held slot. It remembers its window, so a start after midnight counts where it was made."""

    name: str
    token: str
    window: Window
    lease_until_ms: int


@dataclass(frozen=True, slots=True)
class QuotaStatus:
    name: str
    window_kind: str
    timezone: str
    window: str
    used: int
    held: int
    max: int
    resets_at: datetime

    @property
    def remaining(self) -> int:
        return max(0, self.max - self.used - self.held)

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "window": self.window_kind,
            "timezone": self.timezone,
            "day": self.window,
            "used": self.used,
            "held": self.held,
            "max": self.max,
            "remaining": self.remaining,
            "resets_at": self.resets_at.isoformat().replace("+00:00", "Z"),
        }


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
    ) -> None:
        self.client = client
        self.swarm = swarm
        self.quotas = dict(quotas)
        self.mirror_dir = mirror_dir
        self.url = redact(url)
        zones = zones or {}
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

    def _keys(self, name: str, windows: tuple[Window, ...]) -> list[str]:
        out: list[str] = []
        for window in windows:
            out += [
                keys.quota_used(self.swarm, name, window.key),
                keys.quota_held(self.swarm, name, window.key),
            ]
        return out

    @staticmethod
    def _bounds(windows: tuple[Window, Window, Window]) -> list[int]:
        return [windows[0].start_ms, windows[1].start_ms, windows[2].start_ms, windows[2].end_ms]

    def _seed(self, name: str, window: Window) -> int:
        path = self.mirror_path(name)
        if path is None:
            return 0
        return used_in_window(path, window.key, self.config(name).window.value)

    # -- the three operations ----------------------------------------------------------------

    def reserve(self, name: str) -> Reservation:
        """Hold one slot of ``name`` or raise :class:`QuotaExhausted` / :class:`QuotaUnavailable`."""
        cfg = self.config(name)
        windows = self._windows[name].current()
        token = uuid.uuid4().hex
        seeds = [-1, -1, -1]
        for _ in range(2):
            args: list[int | str] = [
                *self._bounds(windows),
                cfg.max_calls_per_day,
                token,
                int(cfg.lease_seconds * 1000),
                *seeds,
                GRACE_MS,
            ]
            try:
                status, index, used, held, _now, lease_until = self._reserve(
                    keys=self._keys(name, windows), args=args
                )
            except TRANSIENT as exc:
                raise self._unavailable(f"reserve {name!r}", exc) from exc
            if status == 2:  # the window's counter is missing: re-seed it from the disk mirror
                seeds[index] = self._seed(name, windows[index])
                continue
            if status == -1:
                raise QuotaUnavailable(
                    f"quota {name!r}: the Redis server clock is more than a day away from this "
                    "host's clock; refusing to guess the quota window"
                )
            window = windows[index]
            if status == 0:
                raise QuotaExhausted(
                    name, window.key, used, held, cfg.max_calls_per_day, window.resets_at
                )
            return Reservation(name, token, window, lease_until)
        raise QuotaUnavailable(
            f"quota {name!r}: could not seed the window counter"
        )  # pragma: no cover

    def start(self, reservation: Reservation) -> int:
        """Count the call; returns calls used in the reservation's window."""
        name, window = reservation.name, reservation.window
        try:
            status, used = self._start(
                keys=[
                    keys.quota_used(self.swarm, name, window.key),
                    keys.quota_held(self.swarm, name, window.key),
                ],
                args=[reservation.token, window.end_ms + GRACE_MS],
            )
        except TRANSIENT as exc:
            raise self._unavailable(f"start {name!r}", exc) from exc
        if status != 1:
            why = "its lease expired" if status == -1 else "it is no longer held"
            raise LeaseLost(
                f"quota {name!r}: cannot start reservation {reservation.token[:8]}: {why}"
            )
        path = self.mirror_path(name)
        if path is not None:
            cfg = self.config(name)
            record_usage(
                path,
                window_key=window.key,
                window=cfg.window.value,
                calls_used=int(used),
                max_calls=cfg.max_calls_per_day,
            )
        return int(used)

    def release(self, reservation: Reservation) -> bool:
        """Return a never-started slot; ``False`` if it was already gone (idempotent)."""
        key = keys.quota_held(self.swarm, reservation.name, reservation.window.key)
        try:
            return bool(self._release(keys=[key], args=[reservation.token]))
        except TRANSIENT as exc:
            raise self._unavailable(f"release {reservation.name!r}", exc) from exc

    def renew(self, reservation: Reservation) -> Reservation:
        """Extend a reservation's lease (for long preparations before the call)."""
        cfg = self.config(reservation.name)
        key = keys.quota_held(self.swarm, reservation.name, reservation.window.key)
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
        return Reservation(reservation.name, reservation.token, reservation.window, until)

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
        windows = self._windows[name].current()
        try:
            index, used, held, _now = self._status(
                keys=self._keys(name, windows), args=self._bounds(windows)
            )
        except TRANSIENT as exc:
            raise self._unavailable(f"read quota {name!r}", exc) from exc
        window = windows[index] if index >= 0 else windows[1]
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


class QuotaSlot:
    """A reservation in a ``with`` block: ``start()`` once, or it is released on exit."""

    def __init__(self, gate: QuotaGate, reservation: Reservation) -> None:
        self.gate = gate
        self.reservation = reservation
        self.started = False
        self.used: int | None = None

    def start(self) -> int:
        if self.started:
            raise QuotaError("this quota slot was already started")
        self.used = self.gate.start(self.reservation)
        self.started = True
        return self.used

    def renew(self) -> None:
        self.reservation = self.gate.renew(self.reservation)

    def __enter__(self) -> QuotaSlot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self.started:
            with contextlib.suppress(QuotaUnavailable):
                # Unreachable Redis: the lease expires and returns the slot by itself.
                self.gate.release(self.reservation)
