"""Which running missions look dead: the reaper's question, answered from the ledger and files.

Only the decision lives here (no Celery): an executing assignment whose newest heartbeat (the
claim's stamp or its heartbeat file) is older than the grace. Whether its worker node still
answers, and where to resume it, is asked by :mod:`swarmq.reaper`.

The decision is taken on a snapshot, and the pings and inspection that follow it take seconds
(more on a loaded machine, or while workers reconnect after a Redis restart). A resume is
therefore fenced by :func:`still_stale`, asked again under the ledger lock that the resume
itself holds: the same claim (its token) must still be the mission's only active run, and its
heartbeat must still be older than the grace. Otherwise a run that beat again meanwhile, or a
claim taken since by a redelivery, would be abandoned alive and its agent started twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.errors import Conflict
from swarmq.missions.history import read_beat
from swarmq.missions.ledger import Assignment, LedgerDoc, Mission, MissionNotFound
from swarmq.missions.states import ACTIVE, MissionState
from swarmq.storage.clock import parse_iso, utc_now


@dataclass(frozen=True)
class StaleRun:
    mission: Mission
    assignment: Assignment
    host: str
    age_seconds: float
    """Seconds since the newest heartbeat (inf when there is none)."""

    @property
    def node(self) -> str:
        """The Celery node that was running it (``<worker>@<host>``)."""
        return f"{self.assignment.worker_id}@{self.host}"


def heartbeat_age(runtime_dir: Path, assignment_id: str, claim: dict[str, Any]) -> float:
    """Seconds since the claim's newest heartbeat: its ledger stamp or its heartbeat file."""
    stamps = [claim.get("heartbeatAt")]
    beat = read_beat(runtime_dir, assignment_id)
    if beat.get("token") == claim.get("token"):
        stamps.append(beat.get("heartbeatAt"))
    ages = []
    for stamp in stamps:
        try:
            ages.append((utc_now() - parse_iso(str(stamp))).total_seconds())
        except ValueError:
            continue
    return min(ages) if ages else float("inf")


def stale_runs(doc: LedgerDoc, runtime_dir: Path, older_than: float) -> list[StaleRun]:
    """Executing assignments whose heartbeat is older than ``older_than`` seconds."""
    out = []
    for mission in doc.missions.values():
        for assignment in mission.assignments:
            if assignment.state is not MissionState.EXECUTING or not assignment.claim:
                continue
            age = heartbeat_age(runtime_dir, assignment.id, assignment.claim)
            if age > older_than:
                out.append(StaleRun(mission, assignment, str(assignment.claim.get("host")), age))
    return out


class RunAlive(Conflict):
    """A resume fenced off by :func:`still_stale`: the run it meant to replace is alive."""


def still_stale(doc: LedgerDoc, runtime_dir: Path, run: StaleRun, older_than: float) -> str | None:
    """Why ``run`` is no longer a dead run to replace (None while it still is), read from
    ``doc`` (under the ledger lock) and the heartbeat file as they are now."""
    token = (run.assignment.claim or {}).get("token")
    try:
        mission = doc.get(run.mission.id)
        assignment = mission.assignment(run.assignment.id)
    except MissionNotFound as exc:
        return str(exc)
    claim = assignment.claim or {}
    if assignment.state is not MissionState.EXECUTING or not claim:
        return f"assignment {assignment.id} is {assignment.state.value} now"
    if claim.get("token") != token:
        return (
            f"assignment {assignment.id} was claimed again (attempt {claim.get('attempt')} on "
            f"{claim.get('host')} pid {claim.get('pid')})"
        )
    others = [a.id for a in mission.assignments if a.state in ACTIVE and a.id != assignment.id]
    if others:
        return f"mission {mission.id} has another active assignment ({', '.join(others)})"
    age = heartbeat_age(runtime_dir, assignment.id, claim)
    if age <= older_than:
        return f"its heartbeat is {age:.1f}s old again (<= {older_than:g}s): the run is alive"
    return None
