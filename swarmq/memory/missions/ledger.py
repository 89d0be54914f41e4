"""The mission ledger ``<runtime>/swarm-missions.json``: every mission and assignment, one file.

Every change is a read-modify-write under the file's store lock, replaced atomically. Records keep
fields they do not know (written by Swarm2's server or a newer swarmq) through every rewrite. An
unreadable ledger is never overwritten: :class:`LedgerCorrupt` names the file and the error.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from swarmq.memory.atomic import write_json_atomic
from swarmq.memory.clock import iso
from swarmq.memory.locking import StoreLocks, file_resource
from swarmq.memory.missions.states import (
    ACTIVE,
    ASSIGNMENT_TRANSITIONS,
    MISSION_TRANSITIONS,
    MissionState,
    check_transition,
)
from swarmq.memory.paths import UnsafePathError, check_id, resolve_inside

LEDGER_FILE = "swarm-missions.json"
LEDGER_VERSION = 1
CLIENT_KEY = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")


class LedgerCorrupt(RuntimeError):
    """The ledger file exists but cannot be read; it is left untouched."""


class MissionNotFound(LookupError):
    pass


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def check_client_key(value: str) -> str:
    if CLIENT_KEY.fullmatch(value) is None:
        raise UnsafePathError(f"client key {value[:80]!r} is not allowed: use 1-128 of A-Z a-z 0-9 _ . : @ -")
    return value


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_assignment=False)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class LogEntry(_Record):
    """A control-plane note on a mission: submitted, routed, state changes and why."""

    at: str = Field(default_factory=iso)
    type: str = "note"
    summary: str = ""
    state: MissionState | None = None


class Assignment(_Record):
    """One dispatch of a mission to one worker."""

    id: str
    worker_id: str = Field(alias="workerId")
    state: MissionState = MissionState.PLANNING
    created_at: str = Field(default_factory=iso, alias="createdAt")
    started_at: str | None = Field(default=None, alias="startedAt")
    ended_at: str | None = Field(default=None, alias="endedAt")
    attempts: int = 0
    """How many times a worker started running it (more than one means redelivery)."""
    resume: bool = False
    """Dispatched by ``mission resume``: the agent continues from the last handoff."""
    queue: str | None = None
    exit_code: int | None = Field(default=None, alias="exitCode")
    reason: str | None = None
    claim: dict[str, Any] | None = None
    """The run in progress: host, pid, token, agentPid, heartbeatAt."""
    transcript: str | None = None

    def move(self, target: MissionState, reason: str | None = None) -> None:
        check_transition(f"assignment {self.id}", ASSIGNMENT_TRANSITIONS, self.state, target)
        self.state = target
        if reason:
            self.reason = reason


class Mission(_Record):
    id: str
    title: str
    objective: str
    state: MissionState = MissionState.PLANNING
    created_at: str = Field(default_factory=iso, alias="createdAt")
    updated_at: str = Field(default_factory=iso, alias="updatedAt")
    client_key: str | None = Field(default=None, alias="clientKey")
    target: dict[str, str] = Field(default_factory=dict)
    """What the orchestrator asked for: workerId, or role and/or specialty."""
    reason: str | None = None
    current_assignment_id: str | None = Field(default=None, alias="currentAssignmentId")
    assignments: list[Assignment] = Field(default_factory=list)
    log: list[LogEntry] = Field(default_factory=list)

    def move(self, target: MissionState, reason: str | None = None, *, kind: str = "state") -> None:
        check_transition(f"mission {self.id}", MISSION_TRANSITIONS, self.state, target)
        if target != self.state or reason:
            self.log.append(LogEntry(type=kind, summary=reason or f"now {target.value}", state=target))
        self.state = target
        self.reason = reason
        self.updated_at = iso()

    def note(self, summary: str, kind: str = "note") -> None:
        self.log.append(LogEntry(type=kind, summary=summary, state=self.state))
        self.updated_at = iso()

    def assignment(self, assignment_id: str) -> Assignment:
        for item in self.assignments:
            if item.id == assignment_id:
                return item
        raise MissionNotFound(f"mission {self.id} has no assignment {assignment_id!r}")

    @property
    def current(self) -> Assignment | None:
        if self.current_assignment_id is None:
            return None
        return self.assignment(self.current_assignment_id)

    @property
    def worker_id(self) -> str | None:
        current = self.current
        return current.worker_id if current else self.target.get("workerId")


class LedgerDoc(_Record):
    version: int = LEDGER_VERSION
    updated_at: str | None = Field(default=None, alias="updatedAt")
    missions: dict[str, Mission] = Field(default_factory=dict)
    client_keys: dict[str, str] = Field(default_factory=dict, alias="clientKeys")

    def get(self, mission_id: str) -> Mission:
        check_id(mission_id, "missionId")
        try:
            return self.missions[mission_id]
        except KeyError:
            raise MissionNotFound(f"no mission {mission_id!r} in the ledger") from None

    def load(self) -> dict[str, int]:
        """Active (planning or executing) assignments per worker: the routing load."""
        counts: dict[str, int] = {}
        for mission in self.missions.values():
            for item in mission.assignments:
                if item.state in ACTIVE:
                    counts[item.worker_id] = counts.get(item.worker_id, 0) + 1
        return counts


class Ledger:
    """The ledger file of one swarm and the lock that guards it."""

    def __init__(self, runtime_dir: Path, locks: StoreLocks) -> None:
        self.path = resolve_inside(runtime_dir, LEDGER_FILE)
        self.locks = locks

    def read(self) -> LedgerDoc:
        """A consistent snapshot (the file is only ever replaced whole)."""
        try:
            raw = self.path.read_text("utf-8")
        except FileNotFoundError:
            return LedgerDoc()
        try:
            return LedgerDoc.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as exc:
            raise LedgerCorrupt(
                f"{self.path}: cannot read the mission ledger ({str(exc).splitlines()[0]}); "
                "it was left untouched: fix or move it aside"
            ) from exc

    @contextlib.contextmanager
    def edit(self, timeout: float | None = 60.0) -> Iterator[LedgerDoc]:
        """Hold the ledger lock, yield the document, write it back if the block succeeds."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.locks.hold(file_resource(self.path), timeout=timeout) as lease:
            doc = self.read()
            yield doc
            doc.updated_at = iso()
            write_json_atomic(self.path, doc.dump(), lease=lease)
