"""Reading and writing worker memory by *kind*: the contract behind ``/api/swarm-memory``.

Kinds: ``profile`` (MEMORY/IDENTITY/SOUL), ``mission`` (SUMMARY, events, handoff), ``episodic``
(daily logs), ``handoff`` (local handoffs + shared latest) and ``shared`` (orchestrator memory).
Every id is checked and every path proven inside its root before anything is touched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from swarmq.errors import InvalidInput, NotFound
from swarmq.profiles.episodes import append_episode
from swarmq.profiles.events import RESERVED_KEYS, EventType, MissionEvent, append_events
from swarmq.profiles.handoffs import write_handoff
from swarmq.profiles.layout import MISSION_FILES, PROFILE_FILES, ProfileLayout, SharedLayout
from swarmq.profiles.summary import SummaryUpdate, update_summary, write_summary
from swarmq.storage.atomic import write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import StoreLocks, file_resource
from swarmq.storage.paths import (
    UnsafePathError,
    check_date,
    check_id,
    read_text_inside,
    resolve_inside,
)

MAX_CONTENT_CHARS = 1_000_000
MAX_EVENT_CHARS = 65_536
RECENT_EPISODES = 7
_SHARED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}\.md$")


class MemoryKind(StrEnum):
    PROFILE = "profile"
    MISSION = "mission"
    EPISODIC = "episodic"
    HANDOFF = "handoff"
    SHARED = "shared"


class MemoryRequestError(InvalidInput):
    """A well-formed request that cannot be served (missing missionId, unknown worker ...)."""


@dataclass
class MemoryFile:
    name: str
    path: str
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "path": self.path, "content": self.content}


@dataclass
class MemoryListing:
    kind: MemoryKind
    worker_id: str | None
    path: str
    files: list[MemoryFile] = field(default_factory=list)


def _read(files: list[MemoryFile], root: Path, path: Path, name: str | None = None) -> None:
    """Add ``path`` if it is a file proven inside ``root`` (a symlink out of it is refused)."""
    text = read_text_inside(root, path)
    if text is not None:
        files.append(MemoryFile(name or path.name, str(path), text))


def read_memory(
    profiles_dir: Path,
    shared_dir: Path,
    kind: MemoryKind,
    *,
    worker_id: str | None = None,
    mission_id: str | None = None,
    day: str | None = None,
    known_workers: set[str] | None = None,
) -> MemoryListing:
    """The files of one kind of memory (missing files are simply absent from ``files``)."""
    shared = SharedLayout(shared_dir)
    if mission_id is not None:
        check_id(mission_id, "missionId")
    if day is not None:
        check_date(day)
    if kind is MemoryKind.SHARED:
        return _read_shared(shared, mission_id)
    layout = _layout(profiles_dir, shared_dir, worker_id, known_workers)
    files: list[MemoryFile] = []
    if kind is MemoryKind.PROFILE:
        for name in PROFILE_FILES:
            _read(files, profiles_dir, layout.profile_file(name))
        _read(files, profiles_dir, layout.runtime_json)
        return MemoryListing(kind, layout.worker_id, str(layout.memory_dir), files)
    if kind is MemoryKind.MISSION:
        if mission_id is None:
            raise MemoryRequestError("kind 'mission' needs missionId")
        for name in MISSION_FILES:
            _read(files, profiles_dir, layout.mission_dir(mission_id) / name)
        return MemoryListing(kind, layout.worker_id, str(layout.mission_dir(mission_id)), files)
    if kind is MemoryKind.EPISODIC:
        if day is not None:
            _read(files, profiles_dir, layout.episode(day))
        else:
            days = sorted(p.name for p in _md_files(layout.episodes_dir))[-RECENT_EPISODES:]
            for name in reversed(days):
                _read(files, profiles_dir, layout.episode(name[:-3]))
        return MemoryListing(kind, layout.worker_id, str(layout.episodes_dir), files)
    # handoff
    if mission_id is not None:
        _read(files, profiles_dir, layout.handoff(mission_id))
    else:
        for path in sorted(
            _md_files(layout.handoffs_dir), key=lambda p: p.stat().st_mtime, reverse=True
        ):
            _read(files, profiles_dir, layout.handoff(path.name[:-3]))
    _read(files, shared_dir, layout.shared_latest)
    return MemoryListing(kind, layout.worker_id, str(layout.handoffs_dir), files)


def _md_files(directory: Path) -> list[Path]:
    try:
        return [
            p
            for p in directory.iterdir()
            if p.is_file() and p.name.endswith(".md") and not p.name.startswith(".")
        ]
    except FileNotFoundError:
        return []


def _read_shared(shared: SharedLayout, mission_id: str | None) -> MemoryListing:
    files: list[MemoryFile] = []
    if mission_id is not None:
        target = shared.archive_dir(mission_id)
        for name in (*MISSION_FILES, "mission.json"):
            _read(files, shared.shared_dir, target / name)
        return MemoryListing(MemoryKind.SHARED, None, str(target), files)
    for path in sorted(_md_files(shared.handoffs_dir)):
        _read(files, shared.shared_dir, path, f"handoffs/swarm/{path.name}")
    for path in sorted(_md_files(shared.swarm_dir)):
        _read(files, shared.shared_dir, path, f"swarm/{path.name}")
    return MemoryListing(MemoryKind.SHARED, None, str(shared.shared_dir), files)


def _layout(
    profiles_dir: Path, shared_dir: Path, worker_id: str | None, known: set[str] | None
) -> ProfileLayout:
    if worker_id is None:
        raise MemoryRequestError("workerId is required unless kind is 'shared'")
    check_id(worker_id, "workerId")
    if known is not None and worker_id not in known:
        raise NotFound(f"unknown worker {worker_id!r}: not in the roster")
    return ProfileLayout(profiles_dir, shared_dir, worker_id)


@dataclass
class MemoryWrite:
    """A ``POST /api/swarm-memory`` body, already shape-checked by the caller."""

    kind: MemoryKind
    worker_id: str | None = None
    mission_id: str | None = None
    event_type: str | None = None
    content: str = ""
    event: dict[str, Any] = field(default_factory=dict)
    file: str | None = None
    mirror: bool = True


def write_memory(
    profiles_dir: Path,
    shared_dir: Path,
    locks: StoreLocks,
    request: MemoryWrite,
    *,
    known_workers: set[str] | None = None,
) -> dict[str, Any]:
    """Apply one write; returns ``{"path": ..., "written": [...], "event": {...}?}``."""
    if len(request.content) > MAX_CONTENT_CHARS:
        raise MemoryRequestError(
            f"content is {len(request.content)} characters; the limit is {MAX_CONTENT_CHARS}"
        )
    if len(json.dumps(request.event, default=str)) > MAX_EVENT_CHARS:
        raise MemoryRequestError(f"event is larger than {MAX_EVENT_CHARS} characters")
    if request.mission_id is not None:
        check_id(request.mission_id, "missionId")
    if request.kind is MemoryKind.SHARED:
        return _write_shared(SharedLayout(shared_dir), locks, request)
    layout = _layout(profiles_dir, shared_dir, request.worker_id, known_workers)
    if request.kind is MemoryKind.PROFILE:
        name = request.file or "MEMORY.md"
        if name not in PROFILE_FILES:
            raise MemoryRequestError(f"file must be one of {', '.join(PROFILE_FILES)}")
        return {
            "path": str(_replace(layout.profile_file(name), request.content, locks)),
            "written": [name],
        }
    if request.kind is MemoryKind.EPISODIC:
        event = _event(layout, request, default=EventType.NOTE)
        append_episode(layout, locks, event)
        return {
            "path": str(layout.episode(event.at[:10])),
            "written": ["episode"],
            "event": event.to_record(),
        }
    mission_id = request.mission_id
    if mission_id is None:
        raise MemoryRequestError(f"kind {request.kind.value!r} needs missionId")
    if request.kind is MemoryKind.HANDOFF:
        paths = write_handoff(layout, locks, mission_id, request.content, mirror=request.mirror)
        event = _event(
            layout, request, default=EventType.HANDOFF_WRITTEN, summary="handoff written via API"
        )
        append_events(layout, locks, mission_id, [event])
        return {
            "path": str(paths[0]),
            "written": [str(p) for p in paths],
            "event": event.to_record(),
        }
    # mission
    if request.event_type is None:
        write_summary(layout, locks, mission_id, request.content)
        return {"path": str(layout.summary(mission_id)), "written": ["SUMMARY.md"]}
    event = _event(layout, request, default=EventType.NOTE)
    appended = append_events(layout, locks, mission_id, [event])
    if event.type is EventType.CHECKPOINT:
        append_episode(layout, locks, event, result=str(request.event.get("result", "")))
        update_summary(layout, locks, mission_id, SummaryUpdate(checkpoints=[event.summary]))
    return {
        "path": str(layout.events(mission_id)),
        "written": ["events.jsonl"] if appended else [],
        "event": event.to_record(),
    }


def _event(
    layout: ProfileLayout, request: MemoryWrite, *, default: EventType, summary: str = ""
) -> MissionEvent:
    try:
        kind = EventType(request.event_type) if request.event_type else default
    except ValueError as exc:
        allowed = ", ".join(t.value for t in EventType)
        raise MemoryRequestError(
            f"eventType {request.event_type!r} is not one of: {allowed}"
        ) from exc
    extra = {k: v for k, v in request.event.items() if k not in RESERVED_KEYS}
    assignment = request.event.get("assignmentId")
    if assignment is not None:
        check_id(assignment, "assignmentId")
    text = request.content or summary or str(request.event.get("summary", "")) or kind.value
    at = iso()
    return MissionEvent(
        kind,
        layout.worker_id,
        request.mission_id or "none",
        text,
        assignment,
        id=_api_event_id(at, text),
        at=at,
        extra=extra,
    )


def _api_event_id(at: str, text: str) -> str:
    from swarmq.profiles.events import event_id

    return event_id("api", at, text)


def _replace(path: Path, content: str, locks: StoreLocks) -> Path:
    with locks.hold(file_resource(path)) as lease:
        write_atomic(path, content if content.endswith("\n") else content + "\n", lease=lease)
    return path


def _write_shared(shared: SharedLayout, locks: StoreLocks, request: MemoryWrite) -> dict[str, Any]:
    name = request.file or "NOTES.md"
    if _SHARED_NAME.fullmatch(name) is None:
        raise UnsafePathError(
            f"file {name!r} is not allowed: use <1-64 letters, digits, '_' or '-'>.md"
        )
    path = resolve_inside(shared.shared_dir, "swarm", name)
    return {"path": str(_replace(path, request.content, locks)), "written": [f"swarm/{name}"]}
