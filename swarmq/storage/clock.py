"""Timestamps in the one form every Swarm2 file uses: ISO 8601 UTC with milliseconds and ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime | None = None) -> str:
    """``2026-04-28T00:00:00.000Z`` (JavaScript's ``Date.toISOString`` form)."""
    moment = moment or utc_now()
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> datetime:
    """Inverse of :func:`iso`; also accepts ``+00:00`` offsets. Naive values are taken as UTC."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def try_parse_iso(value: object) -> datetime | None:
    """:func:`parse_iso` for values read from a store, where a missing or garbled timestamp is
    data to tolerate, not an error: ``None`` instead of raising."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None
