"""Mission and assignment states, with every allowed transition written down once.

A mission moves ``planning → executing → review/complete`` and may stop in ``blocked`` or
``failed``; both can be resumed (a new assignment). ``complete`` and ``cancelled`` are terminal.
An assignment is one dispatch of a mission to one worker; it runs once and settles; resuming a
mission creates a new assignment instead of reviving an old one.
"""

from __future__ import annotations

from enum import StrEnum

from swarmq.errors import Conflict


class MissionState(StrEnum):
    PLANNING = "planning"
    EXECUTING = "executing"
    BLOCKED = "blocked"
    REVIEW = "review"
    COMPLETE = "complete"
    FAILED = "failed"
    CANCELLED = "cancelled"


S = MissionState

TERMINAL: frozenset[MissionState] = frozenset({S.COMPLETE, S.CANCELLED})
"""No transition leaves these."""

RESUMABLE: frozenset[MissionState] = frozenset({S.BLOCKED, S.REVIEW, S.FAILED})
"""Settled but not finished: ``swarmq mission resume`` dispatches a new assignment."""

MISSION_TRANSITIONS: dict[MissionState, frozenset[MissionState]] = {
    S.PLANNING: frozenset({S.EXECUTING, S.BLOCKED, S.FAILED, S.CANCELLED}),
    S.EXECUTING: frozenset({S.BLOCKED, S.REVIEW, S.COMPLETE, S.FAILED, S.CANCELLED}),
    S.BLOCKED: frozenset({S.PLANNING, S.EXECUTING, S.FAILED, S.CANCELLED}),
    S.REVIEW: frozenset({S.PLANNING, S.EXECUTING, S.COMPLETE, S.FAILED, S.CANCELLED}),
    S.FAILED: frozenset({S.PLANNING, S.EXECUTING, S.CANCELLED}),
    S.COMPLETE: frozenset(),
    S.CANCELLED: frozenset(),
}

ASSIGNMENT_TRANSITIONS: dict[MissionState, frozenset[MissionState]] = {
    S.PLANNING: frozenset({S.EXECUTING, S.FAILED, S.CANCELLED}),
    S.EXECUTING: frozenset({S.BLOCKED, S.REVIEW, S.COMPLETE, S.FAILED, S.CANCELLED}),
    S.BLOCKED: frozenset(),
    S.REVIEW: frozenset(),
    S.COMPLETE: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
}

ASSIGNMENT_SETTLED: frozenset[MissionState] = frozenset(
    state for state, nxt in ASSIGNMENT_TRANSITIONS.items() if not nxt
)
"""An assignment in one of these never runs again (a redelivery of it is skipped)."""

ACTIVE: frozenset[MissionState] = frozenset({S.PLANNING, S.EXECUTING})
"""Assignments that count towards a worker's load."""


class TransitionError(Conflict, ValueError):
    """A state change the tables above do not allow."""


def check_transition(
    kind: str,
    table: dict[MissionState, frozenset[MissionState]],
    current: MissionState,
    target: MissionState,
) -> None:
    if current == target:
        return
    if target not in table[current]:
        allowed = ", ".join(sorted(s.value for s in table[current])) or "nothing (terminal)"
        raise TransitionError(
            f"{kind} cannot go from {current.value!r} to {target.value!r}; "
            f"allowed from {current.value!r}: {allowed}"
        )
