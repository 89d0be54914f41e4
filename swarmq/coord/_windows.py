"""Quota windows: calendar days in UTC or in a named time zone, DST-correct.

Python computes the day boundaries (zoneinfo knows the DST rules); the Lua scripts pick, by
Redis ``TIME``, which of three consecutive windows (yesterday, today, tomorrow by the client's
clock) is current. So the server clock decides, and a client clock that is off by hours still
counts in the right day.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

import tzlocal

from swarmq.coord.quota_config import QuotaConfig, QuotaWindow


@dataclass(frozen=True, slots=True)
class Window:
    """One calendar day of a quota: its ``YYYY-MM-DD`` key and its UTC bounds in ms."""

    key: str
    start_ms: int
    end_ms: int

    @property
    def resets_at(self) -> datetime:
        return datetime.fromtimestamp(self.end_ms / 1000, UTC)


def zone_for(config: QuotaConfig) -> tzinfo:
    """UTC, the configured IANA zone, or the host's zone (``window: local``)."""
    if config.window is QuotaWindow.UTC:
        return UTC
    if config.timezone:
        return ZoneInfo(config.timezone)
    return ZoneInfo(tzlocal.get_localzone_name() or "UTC")


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def day_start(day: date, zone: tzinfo) -> datetime:
    """The first instant whose local date is ``day``.

    Local midnight can fall in a DST gap (the day then starts at the transition) or repeat in an
    overlap (the day starts at the first one); trying both folds and keeping the earliest valid
    candidate handles both.
    """
    naive = datetime.combine(day, time())
    candidates = []
    for fold in (0, 1):
        moment = naive.replace(tzinfo=zone, fold=fold).astimezone(UTC)
        if moment.astimezone(zone).date() == day:
            candidates.append(moment)
    if not candidates:  # pragma: no cover - no real zone skips a whole day's first hour twice
        raise ValueError(f"cannot find the start of {day} in {zone}")
    return min(candidates)


def window_for(day: date, zone: tzinfo) -> Window:
    return Window(
        day.isoformat(), _ms(day_start(day, zone)), _ms(day_start(day + timedelta(days=1), zone))
    )


def windows_around(now: datetime, zone: tzinfo) -> tuple[Window, Window, Window]:
    """Yesterday, today and tomorrow in ``zone`` as seen from ``now``."""
    today = now.astimezone(zone).date()
    return (
        window_for(today - timedelta(days=1), zone),
        window_for(today, zone),
        window_for(today + timedelta(days=1), zone),
    )


class WindowCache:
    """Recomputes the three windows only when the clock leaves the cached current window."""

    def __init__(self, zone: tzinfo) -> None:
        self.zone = zone
        self._lock = threading.Lock()
        self._cached: tuple[Window, Window, Window] | None = None

    def current(self, now: datetime | None = None) -> tuple[Window, Window, Window]:
        """Yesterday, today and tomorrow around ``now`` (default: this host's clock)."""
        moment = now or datetime.now(UTC)
        stamp = _ms(moment)
        cached = self._cached
        if cached is not None and cached[1].start_ms <= stamp < cached[1].end_ms:
            return cached
        with self._lock:
            self._cached = windows_around(moment, self.zone)
            return self._cached

    def at_ms(self, stamp: int) -> tuple[Window, Window, Window]:
        """The windows around an epoch-ms timestamp (the hot path: no datetime unless the day
        changed)."""
        cached = self._cached
        if cached is not None and cached[1].start_ms <= stamp < cached[1].end_ms:
            return cached
        return self.current(datetime.fromtimestamp(stamp / 1000, UTC))
