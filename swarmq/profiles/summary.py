"""Mission ``SUMMARY.md``: human-readable mission context, updated section by section.

Only the sections swarmq owns change ("Current state" and "Next action" are replaced; bullets are
added to "Decisions", "Files touched", "Checkpoints" and "Blockers"), so notes a person adds to
other sections or below the bullets survive every update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swarmq.profiles._markdown import Document
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.templates import render
from swarmq.storage.atomic import write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import StoreLocks, file_resource


@dataclass
class SummaryUpdate:
    """What changed in a mission; empty fields leave their section untouched."""

    status: str | None = None
    assignment_id: str | None = None
    decisions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    next_action: str | None = None


def update_summary(
    layout: ProfileLayout,
    locks: StoreLocks,
    mission_id: str,
    update: SummaryUpdate,
    *,
    title: str = "",
    objective: str = "",
) -> str:
    """Create SUMMARY.md from the template when missing, then apply ``update``; returns the text."""
    path = layout.summary(mission_id)
    with locks.hold(file_resource(path)) as lease:
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            text = render(
                "SUMMARY.md",
                mission_id=mission_id,
                title=title or mission_id,
                status=update.status or "planning",
                assignment=update.assignment_id or "none",
                updated=iso(),
                objective=objective,
                next_action=update.next_action or "...",
            )
        doc = Document.parse(text)
        state = _current_state(doc.body("Current state"))
        if update.status:
            state["Status"] = update.status
        if update.assignment_id:
            state["Current assignment"] = update.assignment_id
        state["Last updated"] = iso()
        doc.set_body("Current state", "\n".join(f"- {k}: {v}" for k, v in state.items()))
        doc.add_bullets("Decisions", update.decisions)
        doc.add_bullets("Files touched", update.files)
        doc.add_bullets("Checkpoints", update.checkpoints)
        doc.add_bullets("Blockers", update.blockers)
        if update.next_action:
            doc.set_body("Next action", update.next_action)
        text = doc.render()
        write_atomic(path, text, lease=lease)
    return text


def _current_state(body: str) -> dict[str, str]:
    state: dict[str, str] = {"Status": "planning", "Current assignment": "none", "Last updated": ""}
    for line in body.splitlines():
        key, sep, value = line.strip().lstrip("- ").partition(":")
        if sep and key.strip():
            state[key.strip()] = value.strip()
    return state


def write_summary(layout: ProfileLayout, locks: StoreLocks, mission_id: str, text: str) -> None:
    """Replace SUMMARY.md wholesale (the memory API's explicit write)."""
    path = layout.summary(mission_id)
    with locks.hold(file_resource(path)) as lease:
        write_atomic(path, text if text.endswith("\n") else text + "\n", lease=lease)
