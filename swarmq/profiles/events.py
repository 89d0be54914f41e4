"""Mission ``events.jsonl``: the append-only structured stream of one mission in a worker profile.

Every event carries an ``eventId`` derived from what happened (assignment, type, summary and how
many times that same line was seen in the run), so a redelivered mission that replays the same
output appends nothing new: appends skip ids already in the file, under the file's lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from swarmq.profiles.layout import ProfileLayout
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.clock import iso
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import StoreLocks, file_resource


class EventType(StrEnum):
    """Swarm2's event types, exactly as written in ``events.jsonl``."""

    MISSION_START = "mission-start"
    DISPATCH = "dispatch"
    CHECKPOINT = "checkpoint"
    HANDOFF_REQUESTED = "handoff-requested"
    HANDOFF_WRITTEN = "handoff-written"
    RESUME = "resume"
    BLOCKED = "blocked"
    COMPLETE = "complete"
    NOTE = "note"


RESERVED_KEYS = frozenset(
    {"at", "type", "workerId", "missionId", "assignmentId", "summary", "eventId"}
)
"""Fields an event's free-form ``extra`` may not override."""


def event_id(*parts: object) -> str:
    """A stable id from what identifies the event (never from the clock)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return f"evt-{digest[:20]}"


@dataclass(frozen=True)
class MissionEvent:
    """One line of ``events.jsonl`` (Swarm2 shape plus ``eventId`` and optional extras)."""

    type: EventType
    worker_id: str
    mission_id: str
    summary: str
    assignment_id: str | None = None
    id: str = ""
    """Stable identity; derived from the other fields when left empty."""
    at: str = field(default_factory=iso)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(
                self,
                "id",
                event_id(self.mission_id, self.assignment_id, self.type.value, self.summary),
            )

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "at": self.at,
            "type": self.type.value,
            "workerId": self.worker_id,
            "missionId": self.mission_id,
        }
        if self.assignment_id:
            record["assignmentId"] = self.assignment_id
        record["summary"] = self.summary
        record["eventId"] = self.id
        for key, value in self.extra.items():
            if key not in RESERVED_KEYS:
                record[key] = value
        return record


def read_events(layout: ProfileLayout, mission_id: str) -> list[dict[str, Any]]:
    """Parsed events in file order (corrupt lines are skipped here; readers never rewrite)."""
    return [
        item.value
        for item in iter_jsonl(layout.events(mission_id))
        if isinstance(item, JsonlLine) and isinstance(item.value, dict)
    ]


def append_events(
    layout: ProfileLayout, locks: StoreLocks, mission_id: str, events: list[MissionEvent]
) -> list[MissionEvent]:
    """Append the events whose ids are not in the file yet; returns those appended."""
    if not events:
        return []
    path = layout.events(mission_id)
    with locks.hold(file_resource(path)) as lease:
        seen = {
            item.value.get("eventId")
            for item in iter_jsonl(path)
            if isinstance(item, JsonlLine) and isinstance(item.value, dict)
        }
        fresh: list[MissionEvent] = []
        for event in events:
            if event.id not in seen:
                fresh.append(event)
                seen.add(event.id)
        append_jsonl(path, [e.to_record() for e in fresh], lease=lease)
    return fresh
