"""What the quota gate hands out and raises: reservations, statuses and refusals.

Kept apart from :mod:`swarmq.coord.quota` (which re-exports every name) so the gate module
holds only the gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from swarmq.coord._windows import Window
from swarmq.errors import SwarmqError


class QuotaError(SwarmqError, RuntimeError):
    """Base of every quota refusal."""


class QuotaExhausted(QuotaError):
    """No slot left in the current window.

    Rebuildable from its message alone (``cls(*exc.args)``), which is how Celery hands a task's
    exception back to the caller.
    """

    def __init__(
        self,
        message: str,
        *,
        name: str = "",
        window: str = "",
        used: int = 0,
        held: int = 0,
        maximum: int = 0,
        resets_at: datetime | None = None,
    ) -> None:
        super().__init__(message)
        self.name, self.window, self.used, self.held, self.max = name, window, used, held, maximum
        self.resets_at = resets_at

    @classmethod
    def of(cls, name: str, window: Window, used: int, held: int, maximum: int) -> QuotaExhausted:
        return cls(
            f"daily quota {name!r} exhausted for {window.key}: used={used} held={held} max={maximum}; "
            f"resets at {window.resets_at.isoformat()}",
            name=name,
            window=window.key,
            used=used,
            held=held,
            maximum=maximum,
            resets_at=window.resets_at,
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
    keys: tuple[bytes, bytes] = (b"", b"")
    """The window's ``used`` and ``held`` keys, encoded once when the day began."""


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One EVALSHA ready to send (alone or in a caller's pipeline) and what it was built from."""

    sha: str
    keys: list[bytes]
    args: list[Any]
    token: str
    windows: tuple[Window, Window, Window]


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
