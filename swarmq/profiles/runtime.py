"""``<profile>/runtime.json``: what a worker is doing right now (current mission, state, heartbeat).

Read-modify-write under the file's lock; keys written by other tools (Swarm2's server) survive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from swarmq.profiles.layout import RUNTIME_FILE, ProfileLayout
from swarmq.storage.atomic import write_json_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import StoreLocks, file_resource
from swarmq.storage.paths import check_id, resolve_inside

IDLE = "idle"


def read_runtime(profiles_dir: Path | str, worker_id: str) -> dict[str, Any] | None:
    """The worker's runtime.json, or None when it has none (``swarmq status`` shows it)."""
    path = resolve_inside(profiles_dir, check_id(worker_id, "workerId"), RUNTIME_FILE)
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def update_runtime(
    layout: ProfileLayout, locks: StoreLocks, *, lock_timeout: float | None = None, **changes: Any
) -> dict[str, Any]:
    """Merge ``changes`` (camelCase keys) into runtime.json and stamp ``updatedAt``.

    ``lock_timeout`` bounds the wait for the file's lock (:class:`LockTimeout` after it): a
    heartbeat passes 0 so a lock kept by a dead holder never stalls it.
    """
    path = layout.runtime_json
    with locks.hold(file_resource(path), timeout=lock_timeout) as lease:
        try:
            data = json.loads(path.read_text("utf-8"))
            if not isinstance(data, dict):
                data = {"previous": data}
        except FileNotFoundError:
            data = {}
        except ValueError:
            # Keep the unreadable file beside the new one rather than dropping it.
            os.replace(path, path.with_name(f"{path.name}.corrupt"))
            data = {}
        data.setdefault("workerId", layout.worker_id)
        data.update(changes)
        data["updatedAt"] = iso()
        write_json_atomic(path, data, lease=lease)
    return data


def ensure_runtime(layout: ProfileLayout, locks: StoreLocks) -> None:
    if not layout.runtime_json.exists():
        update_runtime(layout, locks, state=IDLE, currentMissionId=None, currentAssignmentId=None)
