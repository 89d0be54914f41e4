"""Archiving a completed mission to ``<shared>/swarm/missions/<missionId>/`` for the orchestrator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmq.profiles.layout import MISSION_FILES, ProfileLayout
from swarmq.storage.atomic import write_atomic, write_json_atomic
from swarmq.storage.locking import StoreLocks, file_resource


def archive_mission(
    layout: ProfileLayout, locks: StoreLocks, mission_id: str, record: dict[str, Any]
) -> Path:
    """Copy SUMMARY.md, events.jsonl and handoff.md, plus the ledger record as ``mission.json``.

    Re-running it refreshes the copies (each file replaced atomically), so it is idempotent.
    """
    target = layout.shared.archive_dir(mission_id)
    target.mkdir(parents=True, exist_ok=True)
    source = layout.mission_dir(mission_id)
    for name in MISSION_FILES:
        src = source / name
        if not src.is_file():
            continue
        dst = target / name
        with locks.hold(file_resource(dst)) as lease:
            write_atomic(dst, src.read_bytes(), lease=lease)
    dst = target / "mission.json"
    with locks.hold(file_resource(dst)) as lease:
        write_json_atomic(
            dst, {**record, "archivedFrom": str(source), "workerId": layout.worker_id}, lease=lease
        )
    return target
