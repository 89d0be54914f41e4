"""Turning an agent's markers into mission memory as they arrive: events, episodes, SUMMARY.

Event ids count repeats of the same marker within one run, so a redelivered run that prints the
same checkpoints again maps them onto the ids already in ``events.jsonl`` and appends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swarmq.missions._markers import Marker, MarkerKind, MarkerStream
from swarmq.missions.states import MissionState
from swarmq.profiles.episodes import append_episode
from swarmq.profiles.events import EventType, MissionEvent, append_events, event_id
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.summary import SummaryUpdate, update_summary
from swarmq.storage.locking import StoreLocks


@dataclass
class RunRecorder:
    """Applies markers of one assignment run to the worker's mission memory."""

    layout: ProfileLayout
    locks: StoreLocks
    mission_id: str
    assignment_id: str
    stream: MarkerStream = field(default_factory=MarkerStream)
    state_hint: MissionState | None = None
    blocked: list[str] = field(default_factory=list)
    result: str = ""
    next_action: str = ""
    handoff_block: str = ""
    files: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    started: bool = False
    """The run's start (events, SUMMARY, runtime.json) is recorded."""
    _seen: dict[tuple[str, str], int] = field(default_factory=dict)

    def event(
        self, kind: EventType, summary: str, *, key: str | None = None, **extra: object
    ) -> MissionEvent:
        """An event whose id is stable across replays of the same run."""
        if key is None:
            count = self._seen.get((kind.value, summary), 0) + 1
            self._seen[(kind.value, summary)] = count
            key = f"{summary}#{count}"
        return MissionEvent(
            kind,
            self.layout.worker_id,
            self.mission_id,
            summary,
            self.assignment_id,
            id=event_id(self.mission_id, self.assignment_id, kind.value, key),
            extra=dict(extra),
        )

    def record(
        self, event: MissionEvent, *, episode: bool = True, result: str = "", next_action: str = ""
    ) -> bool:
        fresh = append_events(self.layout, self.locks, self.mission_id, [event])
        if episode:
            append_episode(
                self.layout,
                self.locks,
                event,
                result=result,
                next_action=next_action or self.next_action,
            )
        return bool(fresh)

    def record_all(self, events: list[MissionEvent]) -> None:
        """Several events in one append (one lock, one fsync), each with its episode entry
        (episodes skip entries already there, so a replay completes what a crash cut short)."""
        append_events(self.layout, self.locks, self.mission_id, events)
        for event in events:
            append_episode(self.layout, self.locks, event, next_action=self.next_action)

    def feed(self, line: str) -> None:
        for marker in self.stream.feed(line):
            self.apply(marker)

    def close(self) -> None:
        for marker in self.stream.close():
            self.apply(marker)

    def apply(self, marker: Marker) -> None:
        kind, text = marker.kind, marker.text
        if kind is MarkerKind.CHECKPOINT:
            self.checkpoints.append(text)
            self.record(self.event(EventType.CHECKPOINT, text))
            self._summary(SummaryUpdate(checkpoints=[text]))
        elif kind is MarkerKind.STATE:
            self.state_hint = marker.state
            word = text.split(maxsplit=1)[0].upper() if text else ""
            self.record(
                self.event(EventType.CHECKPOINT, f"state {text}", state=word), episode=False
            )
        elif kind is MarkerKind.BLOCKED:
            self.blocked.append(text)
            self.record(self.event(EventType.BLOCKED, text, state="blocked"))
            self._summary(SummaryUpdate(blockers=[text]))
        elif kind is MarkerKind.DECISION:
            self.decisions.append(text)
            self.record(self.event(EventType.NOTE, f"decision: {text}"), episode=False)
            self._summary(SummaryUpdate(decisions=[text]))
        elif kind is MarkerKind.FILE:
            if text not in self.files:
                self.files.append(text)
                self._summary(SummaryUpdate(files=[text]))
        elif kind is MarkerKind.NEXT:
            self.next_action = text
            self._summary(SummaryUpdate(next_action=text))
        elif kind is MarkerKind.NOTE:
            self.record(self.event(EventType.NOTE, text), episode=False)
        elif kind is MarkerKind.RESULT:
            self.result = text
        elif kind is MarkerKind.HANDOFF_REQUESTED:
            self.record(
                self.event(EventType.HANDOFF_REQUESTED, text or "agent requested a handoff")
            )
        elif kind is MarkerKind.HANDOFF:
            self.handoff_block = text

    def _summary(self, update: SummaryUpdate) -> None:
        update_summary(self.layout, self.locks, self.mission_id, update)
