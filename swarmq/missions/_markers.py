"""Checkpoint markers: the lines an agent prints to report progress, parsed into mission events.

One marker per line, keyword in capitals, optionally behind a list bullet or bold markers::

    CHECKPOINT: parser handles nested blocks
    DECISION: keep the v1 schema, add fields
    FILE: src/parser.py
    NEXT: wire the parser into the CLI
    BLOCKED: need the staging credentials
    HANDOFF-REQUESTED: context nearly full
    NOTE: anything worth keeping
    RESULT: 14 tests pass
    STATE: DONE            (DONE | REVIEW | BLOCKED | FAILED | IN_PROGRESS)
    BEGIN HANDOFF
    ## Completed
    ...
    END HANDOFF
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from swarmq.missions.states import MissionState


class MarkerKind(StrEnum):
    CHECKPOINT = "CHECKPOINT"
    DECISION = "DECISION"
    FILE = "FILE"
    NEXT = "NEXT"
    BLOCKED = "BLOCKED"
    HANDOFF_REQUESTED = "HANDOFF-REQUESTED"
    NOTE = "NOTE"
    RESULT = "RESULT"
    STATE = "STATE"
    HANDOFF = "HANDOFF"
    """A whole ``BEGIN HANDOFF`` ... ``END HANDOFF`` block (its Markdown in ``text``)."""


_LINE = re.compile(
    r"^\s*(?:[-*>]\s+)?(?:\*\*)?"
    r"(CHECKPOINT|DECISION|FILES?|NEXT(?: ACTION)?|BLOCKED|HANDOFF[-_ ]REQUESTED|NOTE|RESULT|STATE)"
    r"(?:\*\*)?\s*:(?:\*\*)?\s*(.*?)\s*$"
)
_BEGIN = re.compile(r"^\s*(?:-{3,}\s*)?BEGIN HANDOFF(?:\s*-{3,})?\s*$")
_END = re.compile(r"^\s*(?:-{3,}\s*)?END HANDOFF(?:\s*-{3,})?\s*$")
MAX_MARKER_CHARS = 2_000
MAX_HANDOFF_LINES = 2_000

STATES: dict[str, MissionState | None] = {
    "DONE": MissionState.COMPLETE,
    "COMPLETE": MissionState.COMPLETE,
    "REVIEW": MissionState.REVIEW,
    "BLOCKED": MissionState.BLOCKED,
    "FAILED": MissionState.FAILED,
    "IN_PROGRESS": None,
    "WORKING": None,
}


@dataclass(frozen=True)
class Marker:
    kind: MarkerKind
    text: str

    @property
    def state(self) -> MissionState | None:
        """For ``STATE:`` markers, the mission state it reports (None: still working)."""
        word = self.text.split(maxsplit=1)[0].upper().replace("-", "_") if self.text else ""
        return STATES.get(word)


def _kind(word: str) -> MarkerKind:
    if word.startswith("FILE"):
        return MarkerKind.FILE
    if word.startswith("NEXT"):
        return MarkerKind.NEXT
    if word.startswith("HANDOFF"):
        return MarkerKind.HANDOFF_REQUESTED
    return MarkerKind(word)


class MarkerStream:
    """Feed output lines in order; get markers out (handoff blocks come out when they close)."""

    def __init__(self) -> None:
        self._handoff: list[str] | None = None

    def feed(self, line: str) -> list[Marker]:
        line = line.rstrip("\r\n")
        if self._handoff is not None:
            if _END.match(line):
                text = "\n".join(self._handoff).strip()
                self._handoff = None
                return [Marker(MarkerKind.HANDOFF, text)]
            if len(self._handoff) < MAX_HANDOFF_LINES:
                self._handoff.append(line)
            return []
        if _BEGIN.match(line):
            self._handoff = []
            return []
        match = _LINE.match(line)
        if match is None:
            return []
        text = match.group(2)[:MAX_MARKER_CHARS]
        kind = _kind(match.group(1))
        if kind is MarkerKind.FILE and "," in text:
            return [Marker(kind, part.strip()) for part in text.split(",") if part.strip()]
        return [Marker(kind, text)] if text or kind is MarkerKind.HANDOFF_REQUESTED else []

    def close(self) -> list[Marker]:
        """An unterminated handoff block still counts when the output ends."""
        if self._handoff is None:
            return []
        text = "\n".join(self._handoff).strip()
        self._handoff = None
        return [Marker(MarkerKind.HANDOFF, text)] if text else []
