"""When the roster's ``schedule:`` would have run consolidation between two replayed events.

Beat evaluates schedules in UTC; a cron entry fires at every minute its five fields allow, an
``every`` entry at each multiple of its interval after the beat started (taken as the first
session's start). The replay runs consolidation once per gap between events, at the first moment
it would have fired: a second run in the same gap has nothing new to consolidate.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from swarmq.names import CONSOLIDATION_NIGHTLY, CONSOLIDATION_SCOPE
from swarmq.roster.schema import ScheduleEntry

CONSOLIDATION_TASKS = frozenset({CONSOLIDATION_NIGHTLY, CONSOLIDATION_SCOPE})
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))


def _field(text: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, raw_step = part.split("/", 1)
            step = int(raw_step)
        if part in ("*", ""):
            start, stop = low, high
        elif "-" in part:
            first, last = part.split("-", 1)
            start, stop = int(first), int(last)
        else:
            start = stop = int(part)
            if step != 1:
                stop = high
        values.update(range(start, stop + 1, step))
    return frozenset(v % 7 if high == 6 else v for v in values)


def _cron_fires(cron: str, since: datetime, until: datetime) -> datetime | None:
    """The first minute in (since, until] the crontab allows (UTC), else None."""
    fields = cron.split()
    minute, hour, dom, month, dow = (
        _field(f.lower(), low, high) for f, (low, high) in zip(fields, _RANGES, strict=True)
    )
    moment = since.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while moment <= until:
        weekday = (moment.weekday() + 1) % 7  # cron: 0 = Sunday
        if (
            moment.minute in minute
            and moment.hour in hour
            and moment.day in dom
            and moment.month in month
            and weekday in dow
        ):
            return moment
        moment += timedelta(minutes=1)
    return None


def _every_fires(
    seconds: float, origin: datetime, since: datetime, until: datetime
) -> datetime | None:
    if seconds <= 0:
        return None
    done = int((since - origin).total_seconds() // seconds)
    moment = origin + timedelta(seconds=seconds * (done + 1))
    return moment if moment <= until else None


def consolidation_runs(
    schedule: Mapping[str, ScheduleEntry], since: datetime, until: datetime, *, origin: datetime
) -> list[datetime]:
    """At most one moment in (since, until] when a consolidation entry of ``schedule`` fires."""
    if until <= since:
        return []
    moments = []
    for entry in schedule.values():
        if entry.task not in CONSOLIDATION_TASKS:
            continue
        if entry.cron is not None:
            fired = _cron_fires(entry.cron, since, until)
        else:
            fired = _every_fires(entry.every or 0.0, origin, since, until)
        if fired is not None:
            moments.append(fired)
    return [min(moments)] if moments else []
