"""Handoffs: the note a worker leaves so a fresh session can continue exactly where it stopped.

Written three times, each atomically under its own lock: ``memory/handoffs/<missionId>.md``
(the worker's history), ``memory/missions/<missionId>/handoff.md`` (latest for the mission) and
the shared ``<shared>/handoffs/swarm/<workerId>-latest.md`` the orchestrator reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from swarmq.profiles._markdown import Document
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.templates import render
from swarmq.storage.atomic import write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import StoreLocks, file_resource

SECTIONS: dict[str, str] = {
    "current state": "current_state",
    "objective": "objective",
    "completed": "completed",
    "in progress": "in_progress",
    "files touched": "files_touched",
    "commands run": "commands_run",
    "blockers": "blockers",
    "next exact action": "next_action",
    "next action": "next_action",
}


@dataclass
class Handoff:
    """The sections of Swarm2's handoff template."""

    worker_id: str
    mission_id: str
    current_state: str = ""
    objective: str = ""
    completed: str = ""
    in_progress: str = ""
    files_touched: str = ""
    commands_run: str = ""
    blockers: str = ""
    next_action: str = ""
    generated: str = field(default_factory=iso)

    def merge_markdown(self, text: str) -> None:
        """Fill sections from a Markdown block the agent printed (``## Completed`` ...)."""
        doc = Document.parse(text)
        for section in doc.sections:
            name = SECTIONS.get(section.title.strip().casefold())
            body = "\n".join(section.lines).strip()
            if name and body:
                setattr(self, name, body)
        loose = "\n".join(doc.preamble).strip()
        if loose and not self.in_progress:
            self.in_progress = loose

    def render(self) -> str:
        return render(
            "handoff.md",
            worker_id=self.worker_id,
            mission_id=self.mission_id,
            generated=self.generated,
            current_state=self.current_state,
            objective=self.objective,
            completed=self.completed,
            in_progress=self.in_progress,
            files_touched=self.files_touched,
            commands_run=self.commands_run,
            blockers=self.blockers,
            next_action=self.next_action,
        )


def write_handoff(
    layout: ProfileLayout, locks: StoreLocks, mission_id: str, text: str, *, mirror: bool = True
) -> list[Path]:
    """Write the handoff locally (history + mission) and, with ``mirror``, as the shared latest."""
    targets = [layout.handoff(mission_id), layout.mission_handoff(mission_id)]
    if mirror:
        targets.append(layout.shared_latest)
    body = text if text.endswith("\n") else text + "\n"
    for path in targets:
        with locks.hold(file_resource(path)) as lease:
            write_atomic(path, body, lease=lease)
    return targets


def latest_handoff(layout: ProfileLayout, mission_id: str) -> tuple[Path, str] | None:
    """The newest handoff for a mission: local history, mission copy, then the shared latest
    (only when its header names this mission)."""
    for path in (layout.handoff(mission_id), layout.mission_handoff(mission_id)):
        try:
            return path, path.read_text("utf-8")
        except FileNotFoundError:
            continue
    try:
        shared = layout.shared_latest.read_text("utf-8")
    except FileNotFoundError:
        return None
    first = shared.splitlines()[0] if shared else ""
    if first.rstrip().endswith(f"— {mission_id}"):
        return layout.shared_latest, shared
    return None
