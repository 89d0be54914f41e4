"""The mission ledger ``<runtime>/swarm-missions.json``: the missions that can still change.

Every change is a read-modify-write under the file's store lock, replaced atomically. The file
holds active missions plus a short tail of finished ones (:class:`Retention`); older finished
missions are retired to the Swarm2 archive and the list index (:mod:`.history`), so an edit costs
O(active missions) however many were ever submitted. Records keep fields they do not know
(written by Swarm2's server or a newer swarmq) through every rewrite. An unreadable ledger is
never overwritten: :class:`LedgerCorrupt` names the file and the error.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from swarmq.errors import NotFound, Unavailable
from swarmq.missions.config import MissionsConfig
from swarmq.missions.history import MissionHistory, request_stop
from swarmq.missions.states import (
    ACTIVE,
    ASSIGNMENT_TRANSITIONS,
    MISSION_TRANSITIONS,
    TERMINAL,
    MissionState,
    check_transition,
)
from swarmq.storage.atomic import fsync_dir, write_atomic
from swarmq.storage.clock import iso, parse_iso, utc_now
from swarmq.storage.locking import StoreLocks, confirm_by_release, file_resource
from swarmq.storage.paths import UnsafePathError, check_id, resolve_inside

LEDGER_FILE = "swarm-missions.json"
LEDGER_VERSION = 1
CLIENT_KEY = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")


class LedgerCorrupt(Unavailable, RuntimeError):
    """The ledger file exists but cannot be read; it is left untouched."""


class MissionNotFound(NotFound):
    pass


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def check_client_key(value: str) -> str:
    if CLIENT_KEY.fullmatch(value) is None:
        raise UnsafePathError(
            f"client key {value[:80]!r} is not allowed: use 1-128 of A-Z a-z 0-9 _ . : @ -"
        )
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
    session: str | None = None
    """The agent's own session file kept for this run (see ``agent.transcript``)."""

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
            self.log.append(
                LogEntry(type=kind, summary=reason or f"now {target.value}", state=target)
            )
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


@dataclass(frozen=True)
class Retention:
    """How many finished (complete/cancelled) missions stay in the ledger file, and how long."""

    keep: int = 50
    seconds: float = 3600.0


class LedgerDoc(_Record):
    version: int = LEDGER_VERSION
    updated_at: str | None = Field(default=None, alias="updatedAt")
    missions: dict[str, Mission] = Field(default_factory=dict)
    client_keys: dict[str, str] = Field(default_factory=dict, alias="clientKeys")
    _history: MissionHistory | None = PrivateAttr(default=None)

    def get(self, mission_id: str) -> Mission:
        """A mission in the ledger, else its retired record from the archive (read-only use)."""
        check_id(mission_id, "missionId")
        found = self.missions.get(mission_id)
        if found is not None:
            return found
        record = self._history.archived(mission_id) if self._history is not None else None
        if record is None:
            raise MissionNotFound(f"no mission {mission_id!r} in the ledger or its archive")
        return Mission.model_validate(record)

    def exists(self, mission_id: str) -> bool:
        return mission_id in self.missions or (
            self._history is not None and self._history.archived(mission_id) is not None
        )

    def add(self, mission: Mission) -> Mission:
        """Put a new mission in the ledger, with its client key (the caller checked both free)."""
        self.missions[mission.id] = mission
        if mission.client_key is not None:
            self.client_keys[mission.client_key] = mission.id
        return mission

    def key_owner(self, client_key: str) -> str | None:
        """The mission created for ``client_key``, active or retired."""
        owner = self.client_keys.get(client_key)
        if owner is None and self._history is not None:
            owner = self._history.key_owner(client_key)
        return owner

    def due_for_retirement(self, retention: Retention) -> list[Mission]:
        """Finished missions past the retention age, plus the oldest beyond ``retention.keep``."""
        finished = sorted(
            (m for m in self.missions.values() if m.state in TERMINAL), key=lambda m: m.updated_at
        )
        cutoff = utc_now() - timedelta(seconds=retention.seconds)
        due = [m for m in finished if _before(m.updated_at, cutoff)]
        rest = finished[len(due) :]
        if len(rest) > retention.keep:
            due += rest[: len(rest) - retention.keep]
        return due

    def load(self) -> dict[str, int]:
        """Active (planning or executing) assignments per worker: the routing load."""
        counts: dict[str, int] = {}
        for mission in self.missions.values():
            for item in mission.assignments:
                if item.state in ACTIVE:
                    counts[item.worker_id] = counts.get(item.worker_id, 0) + 1
        return counts


def _before(stamp: str, cutoff: datetime) -> bool:
    try:
        return parse_iso(stamp) < cutoff
    except ValueError:
        return False


class Ledger:
    """The ledger file of one swarm, the lock that guards it and where finished missions retire."""

    def __init__(
        self,
        runtime_dir: Path,
        locks: StoreLocks,
        *,
        archive_root: Path,
        retention: Retention | None = None,
    ) -> None:
        """``archive_root`` is where retired missions go: every handle on one ledger must name the
        same one (:meth:`for_swarm` does), or a retired mission is looked for in the wrong place."""
        self.runtime_dir = runtime_dir
        self.path = resolve_inside(runtime_dir, LEDGER_FILE)
        self.locks = locks
        self.retention = retention or Retention()
        self.history = MissionHistory(runtime_dir, archive_root, locks)

    @classmethod
    def for_swarm(
        cls, config: MissionsConfig, *, runtime_dir: Path, shared_dir: Path, locks: StoreLocks
    ) -> Ledger:
        """A swarm's ledger in ``runtime_dir``, kept as its ``missions:`` section says and
        retiring to ``<shared_dir>/swarm/missions`` (Swarm2's archive)."""
        return cls(
            runtime_dir,
            locks,
            archive_root=shared_dir / "swarm" / "missions",
            retention=Retention(config.ledger_keep_finished, config.ledger_keep_finished_seconds),
        )

    def read(self) -> LedgerDoc:
        """A consistent snapshot (the file is only ever replaced whole)."""
        try:
            raw = self.path.read_text("utf-8")
        except FileNotFoundError:
            doc = LedgerDoc()
        else:
            try:
                doc = LedgerDoc.model_validate_json(raw)
            except (ValueError, ValidationError) as exc:
                raise LedgerCorrupt(
                    f"{self.path}: cannot read the mission ledger ({str(exc).splitlines()[0]}); "
                    "it was left untouched: fix or move it aside"
                ) from exc
        doc._history = self.history
        return doc

    @contextlib.contextmanager
    def edit(
        self, timeout: float | None = 60.0, *, defer_dir_sync: bool = False
    ) -> Iterator[LedgerDoc]:
        """Hold the ledger lock, yield the document, write it back if the block succeeds.

        After the block: new client keys are recorded, newly cancelled missions get a stop
        request (their runner sees it at its next heartbeat) and missions due are retired.

        ``defer_dir_sync`` fsyncs the new file but not its directory: until :meth:`sync` (or any
        later durable edit) a power loss may bring back the previous ledger, which is itself on
        disk. Only for edits whose loss is a retry, never a lost acknowledgement (a run's claim:
        the crash that loses it also killed the run, and the message is redelivered).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.locks.hold(file_resource(self.path), timeout=timeout) as lease:
            doc = self.read()
            keys = dict(doc.client_keys)
            states = {mission_id: m.state for mission_id, m in doc.missions.items()}
            yield doc
            for key, owner in doc.client_keys.items():
                if keys.get(key) != owner:
                    self.history.remember_key(key, owner, durable=False)
            for mission_id, mission in doc.missions.items():
                if (
                    mission.state is MissionState.CANCELLED
                    and states.get(mission_id) is not MissionState.CANCELLED
                ):
                    request_stop(
                        self.runtime_dir, mission_id, mission.reason or "mission cancelled"
                    )
            due = doc.due_for_retirement(self.retention)
            if due:
                self.history.retire([m.dump() for m in due])
                gone = {m.id for m in due}
                for mission_id in gone:
                    del doc.missions[mission_id]
                doc.client_keys = {k: v for k, v in doc.client_keys.items() if v not in gone}
            doc.updated_at = iso()
            text = doc.model_dump_json(by_alias=True, exclude_none=True, indent=2)
            write_atomic(
                self.path,
                text,
                lease=lease,
                sync_dir=_no_dir_sync if defer_dir_sync else None,
                confirm=False,
            )
            confirm_by_release(lease)  # the write is the last act under the lock

    def sync(self) -> None:
        """Make an edit made with ``defer_dir_sync`` durable (fsync the ledger's directory)."""
        fsync_dir(self.path.parent)


def _no_dir_sync(directory: Path) -> None:
    """The directory fsync left to :meth:`Ledger.sync`."""
