"""Episodic logs ``memory/episodes/YYYY-MM-DD.md``: the worker's chronological, greppable diary.

Each entry ends with an invisible ``<!-- swarmq:event <eventId> -->`` marker so that replaying an
event (a redelivered mission) never writes the same entry twice.
"""

from __future__ import annotations

from swarmq.profiles.events import MissionEvent
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.templates import render
from swarmq.storage.atomic import append_lines
from swarmq.storage.locking import StoreLocks, file_resource


def marker(event_id: str) -> str:
    return f"<!-- swarmq:event {event_id} -->"


def append_episode(
    layout: ProfileLayout,
    locks: StoreLocks,
    event: MissionEvent,
    *,
    result: str = "",
    next_action: str = "",
) -> bool:
    """Add the episode entry for ``event`` to its day's file; False when already there."""
    day = event.at[:10]
    path = layout.episode(day)
    tag = marker(event.id)
    with locks.hold(file_resource(path)) as lease:
        try:
            existing = path.read_text("utf-8")
        except FileNotFoundError:
            existing = ""
        if tag in existing:
            return False
        lines: list[str] = []
        if not existing:
            lines += [f"# Episodes — {layout.worker_id} — {day}", ""]
        elif not existing.endswith("\n\n"):
            lines.append("")
        entry = render(
            "episode.md",
            time=event.at[11:16],
            event_type=event.type.value,
            mission_id=event.mission_id,
            assignment_id=event.assignment_id or "none",
            summary=_one_line(event.summary),
            result=_one_line(result),
            next_action=_one_line(next_action),
        )
        lines += [*entry.rstrip("\n").splitlines(), tag]
        append_lines(path, lines, lease=lease)
    return True


def _one_line(text: str, limit: int = 500) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
