"""Where missions go when they leave the active ledger, and the per-run files beside it.

The ledger file holds only missions that can still change (plus a short tail of recently finished
ones), so an edit costs O(active missions), not O(missions ever submitted). A finished mission is
*retired*: its record goes to the Swarm2 archive ``<shared>/swarm/missions/<id>/mission.json``, one
summary line to ``<runtime>/missions-index.jsonl`` (what ``mission list`` reads) and its client key
stays answerable through ``<runtime>/mission-keys/<hash>.json``. Heartbeats and stop requests are
small per-run files, so a running mission never rewrites the ledger to say it is alive.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.errors import Unavailable
from swarmq.storage.atomic import append_lines, write_atomic, write_json_atomic
from swarmq.storage.locking import StoreLocks, file_resource
from swarmq.storage.paths import check_id, resolve_inside

INDEX_FILE = "missions-index.jsonl"
KEYS_DIR = "mission-keys"
BEATS_DIR = "mission-heartbeats"
STOPS_DIR = "mission-stops"
INDEX_OBJECTIVE_CHARS = 500
"""An index line keeps this much of the objective (the archive keeps all of it)."""


class MissionHistory:
    """The retired missions of one swarm: archive records, the list index, client keys."""

    def __init__(self, runtime_dir: Path, archive_root: Path, locks: StoreLocks) -> None:
        self.runtime_dir = runtime_dir
        self.archive_root = archive_root
        self.locks = locks
        self.index_path = resolve_inside(runtime_dir, INDEX_FILE)

    # -- client keys --------------------------------------------------------------------------

    def key_path(self, client_key: str) -> Path:
        digest = hashlib.sha256(client_key.encode("utf-8")).hexdigest()[:40]
        return resolve_inside(self.runtime_dir, KEYS_DIR, f"{digest}.json")

    def remember_key(self, client_key: str, mission_id: str, *, durable: bool = True) -> None:
        """Called under the ledger lock when a mission with a client key is created.

        The ledger's ``clientKeys`` answers for an active mission, so the submit writes this
        record without fsyncs (``durable=False``); :meth:`retire` writes it again durably
        before the mission leaves the ledger.
        """
        record = json.dumps({"clientKey": client_key, "missionId": mission_id}, ensure_ascii=False)
        write_atomic(self.key_path(client_key), record, durable=durable)

    def key_owner(self, client_key: str) -> str | None:
        try:
            data = json.loads(self.key_path(client_key).read_text("utf-8"))
        except FileNotFoundError:
            return None
        except ValueError as exc:
            raise Unavailable(
                f"{self.key_path(client_key)}: unreadable client-key record ({exc})"
            ) from exc
        if data.get("clientKey") != client_key:  # a hash collision: treat as unknown
            return None
        owner = data.get("missionId")
        return owner if isinstance(owner, str) else None

    # -- archive ------------------------------------------------------------------------------

    def archive_file(self, mission_id: str) -> Path:
        return resolve_inside(self.archive_root, check_id(mission_id, "missionId"), "mission.json")

    def archived(self, mission_id: str) -> dict[str, Any] | None:
        """The archived record of a retired mission, or None."""
        path = self.archive_file(mission_id)
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return None
        except ValueError as exc:
            raise Unavailable(f"{path}: unreadable archived mission record ({exc})") from exc
        return data if isinstance(data, dict) and data.get("retired") else None

    def retire(self, records: list[dict[str, Any]]) -> None:
        """Archive each record (keeping fields the runner's archive added) and index it.

        Archive first, index second, and the caller drops the missions from the ledger last: a
        crash in between leaves a mission both in the ledger and retired, never in neither.
        """
        lines = []
        for record in records:
            path = self.archive_file(str(record["id"]))
            with self.locks.hold(file_resource(path)) as lease:
                previous: dict[str, Any] = {}
                with contextlib.suppress(FileNotFoundError, ValueError):
                    loaded = json.loads(path.read_text("utf-8"))
                    previous = loaded if isinstance(loaded, dict) else {}
                write_json_atomic(path, {**previous, **record, "retired": True}, lease=lease)
            if isinstance(record.get("clientKey"), str):
                self.remember_key(record["clientKey"], str(record["id"]))
            lines.append(json.dumps(index_entry(record, path), ensure_ascii=False))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(stop_path(self.runtime_dir, str(record["id"])))
            for assignment in record.get("assignments", []):
                clear_beat(self.runtime_dir, str(assignment.get("id")))
        if lines:
            append_lines(self.index_path, lines)

    def index(self, *, newest_first: bool = False) -> Iterator[dict[str, Any]]:
        """Index lines in retirement order (or newest first, read backwards from the end, so a
        ``--limit`` list stops early); a torn or foreign line is skipped, not fatal."""
        try:
            handle = self.index_path.open("rb")
        except FileNotFoundError:
            return
        with handle:
            lines = _backwards(handle) if newest_first else iter(handle)
            for line in lines:
                with contextlib.suppress(ValueError):
                    entry = json.loads(line)
                    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                        yield entry


def _backwards(handle: Any, block: int = 1 << 16) -> Iterator[bytes]:
    """The lines of a binary file, last first."""
    handle.seek(0, os.SEEK_END)
    position = handle.tell()
    rest = b""
    while position > 0:
        step = min(block, position)
        position -= step
        handle.seek(position)
        chunk = handle.read(step) + rest
        parts = chunk.split(b"\n")
        rest = parts[0]
        for line in reversed(parts[1:]):
            if line.strip():
                yield line
    if rest.strip():
        yield rest


def index_entry(record: dict[str, Any], archived: Path) -> dict[str, Any]:
    """A mission record without its log and claims, objective clipped: enough to list it."""
    entry = {k: v for k, v in record.items() if k not in ("log", "objective")}
    objective = str(record.get("objective", ""))
    entry["objective"] = objective[:INDEX_OBJECTIVE_CHARS]
    entry["assignments"] = [
        {k: v for k, v in a.items() if k != "claim"}
        for a in record.get("assignments", [])
        if isinstance(a, dict)
    ]
    entry["archived"] = str(archived)
    return entry


# -- per-run files: heartbeats and stop requests ------------------------------------------------


def beat_path(runtime_dir: Path, assignment_id: str) -> Path:
    return resolve_inside(runtime_dir, BEATS_DIR, f"{check_id(assignment_id, 'assignmentId')}.json")


def write_beat(runtime_dir: Path, assignment_id: str, beat: dict[str, Any]) -> None:
    """Replace the run's heartbeat (no fsync: a lost beat only makes the run look older)."""
    write_atomic(beat_path(runtime_dir, assignment_id), json.dumps(beat), durable=False)


def read_beat(runtime_dir: Path, assignment_id: str) -> dict[str, Any]:
    try:
        data = json.loads(beat_path(runtime_dir, assignment_id).read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def clear_beat(runtime_dir: Path, assignment_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(beat_path(runtime_dir, assignment_id))


def stop_path(runtime_dir: Path, mission_id: str) -> Path:
    return resolve_inside(runtime_dir, STOPS_DIR, f"{check_id(mission_id, 'missionId')}.txt")


def request_stop(runtime_dir: Path, mission_id: str, reason: str) -> None:
    """Ask the mission's running agent to stop at its next heartbeat (written after a cancel)."""
    write_atomic(stop_path(runtime_dir, mission_id), reason)


def stop_reason(runtime_dir: Path, mission_id: str) -> str | None:
    try:
        return stop_path(runtime_dir, mission_id).read_text("utf-8") or "mission cancelled"
    except FileNotFoundError:
        return None
