"""Submitting, cancelling and resuming missions: pure changes to the ledger document.

The caller holds the ledger lock (``Ledger.edit``) and does the I/O around it: asking Celery who is
alive before, sending the task (a new mission's before its commit: :func:`commit_created`). Submits are idempotent by the client's key: the same key
returns the mission it created the first time, whatever the other arguments say.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from swarmq.errors import Conflict, InvalidInput
from swarmq.missions.ledger import Assignment, LedgerDoc, Mission, check_client_key, new_id
from swarmq.missions.routing import Route, Target
from swarmq.missions.states import (
    ACTIVE,
    RESUMABLE,
    TERMINAL,
    MissionState,
    TransitionError,
)
from swarmq.storage.clock import iso
from swarmq.storage.paths import check_id

MAX_OBJECTIVE_CHARS = 100_000
MAX_TITLE_CHARS = 200


class MissionConflict(Conflict, ValueError):
    """The request contradicts the ledger (duplicate mission id, resume of a running mission)."""


@dataclass
class MissionSpec:
    objective: str
    title: str | None = None
    target: Target = field(default_factory=Target)
    client_key: str | None = None
    mission_id: str | None = None

    def validate(self) -> None:
        if not self.objective.strip():
            raise InvalidInput("objective must not be empty")
        if len(self.objective) > MAX_OBJECTIVE_CHARS:
            raise InvalidInput(f"objective is longer than {MAX_OBJECTIVE_CHARS} characters")
        if self.title is not None and len(self.title) > MAX_TITLE_CHARS:
            raise InvalidInput(f"title is longer than {MAX_TITLE_CHARS} characters")
        if self.mission_id is not None:
            check_id(self.mission_id, "missionId")
        if self.client_key is not None:
            check_client_key(self.client_key)
        if self.target.worker_id is not None:
            check_id(self.target.worker_id, "workerId")
        for name, value in (("role", self.target.role), ("specialty", self.target.specialty)):
            if value is not None and (
                not value.strip() or len(value) > 64 or not value.isprintable()
            ):
                raise InvalidInput(f"{name} must be 1-64 printable characters")


def existing_for_key(doc: LedgerDoc, client_key: str | None) -> Mission | None:
    if client_key is None:
        return None
    mission_id = doc.key_owner(client_key)
    return doc.get(mission_id) if mission_id else None


def _title(spec: MissionSpec) -> str:
    if spec.title and spec.title.strip():
        return " ".join(spec.title.split())
    first = " ".join(spec.objective.strip().splitlines()[0].split())
    return first if len(first) <= 80 else first[:79] + "…"


def _assign(mission: Mission, worker_id: str, *, resume: bool) -> Assignment:
    from swarmq.names import direct_queue

    assignment = Assignment(
        id=new_id("assign"), workerId=worker_id, queue=direct_queue(worker_id), resume=resume
    )
    mission.assignments.append(assignment)
    mission.current_assignment_id = assignment.id
    return assignment


def create_mission(doc: LedgerDoc, spec: MissionSpec, route: Route) -> Mission:
    """Add a mission routed by ``route`` (planning with an assignment, or blocked/failed)."""
    spec.validate()
    mission_id = spec.mission_id or new_id("mission")
    if doc.exists(mission_id):
        raise MissionConflict(f"mission {mission_id!r} already exists in the ledger")
    mission = Mission(
        id=mission_id,
        title=_title(spec),
        objective=spec.objective,
        target=spec.target.as_dict(),
        clientKey=spec.client_key,
    )
    mission.note(f"submitted for {spec.target.describe()}", kind="submit")
    if route.worker_id is not None and route.state is MissionState.PLANNING:
        assignment = _assign(mission, route.worker_id, resume=False)
        mission.note(f"{route.reason}; assignment {assignment.id}", kind="dispatch")
    else:
        if route.worker_id is not None:
            mission.target.setdefault("workerId", route.worker_id)
        mission.move(route.state, route.reason, kind="route")
    return doc.add(mission)


class Committed(enum.Enum):
    """What :func:`commit_created` found under the lock."""

    INSERTED = "inserted"
    """The record went in as created."""
    CLAIMED = "claimed"
    """Its claim had created it from the task message (and may have claimed it): kept."""
    TAKEN = "taken"
    """Its client key belongs to another mission (a concurrent submit with the same key)."""


def commit_created(doc: LedgerDoc, mission: Mission) -> tuple[Mission, Committed]:
    """Put a mission made by :func:`create_mission` on a lock-free snapshot, whose task may
    already be on its way, into the ledger (the caller holds the lock). Returns the ledger's
    mission and what happened. The claim's record is never overwritten by this later create;
    a mission whose key another took is not added (its task's claim refuses it)."""
    stored = doc.missions.get(mission.id)
    if stored is not None:
        ours = {a.id for a in mission.assignments}
        if ours and any(a.id in ours for a in stored.assignments):
            return stored, Committed.CLAIMED
        raise MissionConflict(f"mission {mission.id!r} already exists in the ledger")
    owner = existing_for_key(doc, mission.client_key)
    if owner is not None:
        return owner, Committed.TAKEN
    if doc.exists(mission.id):  # a caller-chosen id, retired meanwhile
        raise MissionConflict(f"mission {mission.id!r} already exists in the ledger")
    return doc.add(mission), Committed.INSERTED


def cancel_mission(doc: LedgerDoc, mission_id: str, reason: str) -> Mission:
    """Cancel; queued assignments settle now, a running one when its runner next checks in."""
    mission = doc.get(mission_id)
    if mission.state is MissionState.CANCELLED:
        return mission
    if mission.state in TERMINAL:
        raise TransitionError(
            f"mission {mission_id} is already {mission.state.value}; nothing to cancel"
        )
    for assignment in mission.assignments:
        if assignment.state is MissionState.PLANNING:
            assignment.move(MissionState.CANCELLED, reason)
    mission.move(MissionState.CANCELLED, f"cancelled: {reason}", kind="cancel")
    return mission


def resume_mission(
    doc: LedgerDoc,
    mission_id: str,
    route: Route,
    note: str | None = None,
    *,
    force: str | None = None,
) -> Mission:
    """Dispatch a new assignment that continues from the last handoff.

    ``force`` (the reason) first settles a still-active assignment as failed: for a run whose
    host died (the reaper) or that the operator knows is gone (``mission resume --force``). It
    only happens when the route found a worker, so a mission is never left without a run.
    """
    mission = doc.get(mission_id)
    running = [a for a in mission.assignments if a.state in ACTIVE]
    if running and force is None:
        raise MissionConflict(
            f"mission {mission_id} still has assignment {running[0].id} {running[0].state.value} "
            f"on {running[0].worker_id}; cancel it, wait, or resume with --force if its host is gone"
        )
    if mission.state in TERMINAL:
        raise TransitionError(
            f"mission {mission_id} is {mission.state.value}; only blocked, review or failed missions resume"
        )
    if route.worker_id is None or route.state is not MissionState.PLANNING:
        mission.note(f"resume refused: {route.reason}", kind="resume")
        if (
            not running
            and route.state is not mission.state
            and route.state in (MissionState.BLOCKED, MissionState.FAILED)
        ):
            mission.move(route.state, route.reason, kind="route")
        return mission
    if running:
        assert force is not None
        for assignment in running:
            assignment.move(MissionState.FAILED, force)
            assignment.ended_at = iso()
            assignment.claim = None
        if mission.state is MissionState.EXECUTING:
            mission.move(MissionState.FAILED, force, kind="abandon")
    if mission.state not in RESUMABLE and mission.state is not MissionState.PLANNING:
        raise TransitionError(
            f"mission {mission_id} is {mission.state.value}; only blocked, review or failed missions resume"
        )
    assignment = _assign(mission, route.worker_id, resume=True)
    mission.move(
        MissionState.PLANNING,
        f"resumed on {route.worker_id} as {assignment.id}" + (f": {note}" if note else ""),
        kind="resume",
    )
    return mission
