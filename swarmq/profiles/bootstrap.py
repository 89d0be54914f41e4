"""Creating worker profiles from the roster without ever overwriting a human's edits.

Each generated file's SHA-256 is recorded in ``memory/.generated.json``. A file that still
has the recorded hash was never edited, so it is regenerated when the roster changes (a new role
or model); a file with any other content was edited by a person and is left alone.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from swarmq.profiles.config import WorkerProfile
from swarmq.profiles.layout import PROFILE_FILES, ProfileLayout
from swarmq.profiles.runtime import ensure_runtime
from swarmq.profiles.templates import render
from swarmq.storage.atomic import write_atomic, write_json_atomic
from swarmq.storage.locking import Lease, StoreLocks, file_resource

FileAction = Literal["created", "updated", "kept"]
GENERATED_FILE = ".generated.json"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def profile_texts(worker: WorkerProfile, swarm: str) -> dict[str, str]:
    """What MEMORY.md, IDENTITY.md and SOUL.md look like for a roster entry."""
    role_line = worker.role + (f" — {worker.specialty}" if worker.specialty else "")
    specialty_clause = f", specialised in {worker.specialty}" if worker.specialty else ""
    values = {
        "worker_id": worker.id,
        "name": worker.display_name,
        "role": worker.role,
        "specialty": worker.specialty or "none",
        "model": worker.model or "unspecified",
        "role_line": role_line,
        "swarm": swarm,
        "specialty_clause": specialty_clause,
    }
    return {name: render(name, **values) for name in PROFILE_FILES}


def ensure_profile(
    layout: ProfileLayout, worker: WorkerProfile, swarm: str, locks: StoreLocks
) -> dict[str, FileAction]:
    """Create (or refresh unedited) profile files and the memory directories; idempotent."""
    memory = layout.memory_dir
    for directory in (memory, layout.missions_dir, layout.episodes_dir, layout.handoffs_dir):
        directory.mkdir(parents=True, exist_ok=True)
    record_path = memory / GENERATED_FILE
    actions: dict[str, FileAction] = {}
    with locks.hold(file_resource(record_path)) as record_lease:
        try:
            recorded: dict[str, str] = json.loads(record_path.read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            recorded = {}
        for name, text in profile_texts(worker, swarm).items():
            path = layout.profile_file(name)
            with locks.hold(file_resource(path)) as lease:
                actions[name] = _ensure_file(path, text, recorded, lease)
        if any(action != "kept" for action in actions.values()):
            write_json_atomic(record_path, recorded, lease=record_lease)
    ensure_runtime(layout, locks)
    return actions


_CURRENT: dict[tuple[str, str, int], tuple[list[Path], list[Path], Path, tuple[object, ...]]] = {}
"""Profiles this process found current: the files and directories checked and the files' stat
signature (``ino``, ``size``, ``mtime_ns``), keyed by root, worker and the roster's texts."""


def _signature(
    files: list[Path], dirs: list[Path], present: Path | None = None
) -> tuple[object, ...] | None:
    """The files' stat signature, or None when one of them, of ``dirs`` or ``present`` is missing."""
    out: list[object] = []
    if present is not None and not os.path.exists(present):
        return None
    try:
        for directory in dirs:
            if not os.path.isdir(directory):
                return None
        for path in files:
            info = os.stat(path)
            out.append((info.st_ino, info.st_size, info.st_mtime_ns))
    except OSError:
        return None
    return tuple(out)


def profile_current(layout: ProfileLayout, worker: WorkerProfile, swarm: str) -> bool:
    """Whether :func:`ensure_profile` would change nothing, checked without taking locks.

    A mission run asks this first: the profile almost always exists, and four store locks
    before every agent start are dispatch latency for nothing. Once a check passed, the next
    ones in this process only ``stat``: profile files unchanged since and directories present
    (runtime.json changes at every heartbeat: only its presence counts).
    """
    texts = profile_texts(worker, swarm)
    key = (str(layout.profiles_dir), layout.worker_id, hash(tuple(sorted(texts.items()))))
    known = _CURRENT.get(key)
    if known is not None and _signature(known[0], known[1], known[2]) == known[3]:
        return True
    dirs = [layout.memory_dir, layout.missions_dir, layout.episodes_dir, layout.handoffs_dir]
    if not layout.runtime_json.exists() or not all(d.is_dir() for d in dirs):
        return False
    generated = layout.memory_dir / GENERATED_FILE
    files = [generated, *(layout.profile_file(name) for name in texts)]
    before = _signature(files, [])  # taken before the reads: a change meanwhile is seen next time
    try:
        recorded = json.loads(generated.read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        recorded = {}
    for name, text in texts.items():
        try:
            current = layout.profile_file(name).read_text("utf-8")
        except FileNotFoundError:
            return False
        if current != text and isinstance(recorded, dict) and recorded.get(name) == _sha(current):
            return False  # an unedited file the roster changed: ensure_profile refreshes it
    signature = _signature(files, dirs, layout.runtime_json)
    if before is not None and signature == before:
        _CURRENT[key] = (files, dirs, layout.runtime_json, signature)
    return True


def _ensure_file(path: Path, text: str, recorded: dict[str, str], lease: Lease) -> FileAction:
    try:
        current = path.read_text("utf-8")
    except FileNotFoundError:
        write_atomic(path, text, lease=lease)
        recorded[path.name] = _sha(text)
        return "created"
    if current == text:
        recorded.setdefault(path.name, _sha(text))
        return "kept"
    if recorded.get(path.name) == _sha(current):
        write_atomic(path, text, lease=lease)
        recorded[path.name] = _sha(text)
        return "updated"
    return "kept"


def ensure_profiles(
    workers: Sequence[WorkerProfile],
    *,
    swarm: str,
    profiles_dir: Path,
    shared_dir: Path,
    locks: StoreLocks,
) -> dict[str, dict[str, FileAction]]:
    """Profile memory for every worker of swarm ``swarm`` (``swarmq roster init``, ``swarmq up``)."""
    out: dict[str, dict[str, FileAction]] = {}
    for worker in workers:
        layout = ProfileLayout(profiles_dir, shared_dir, worker.id)
        out[worker.id] = ensure_profile(layout, worker, swarm, locks)
    return out
