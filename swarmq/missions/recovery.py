"""Which running missions look dead: the reaper's question, answered from the ledger and files.

Only the decision lives here (no Celery): an executing assignment whose newest heartbeat (the
claim's stamp or its heartbeat file) is older than the grace. Whether its worker node still
answers, and where to resume it, is asked by :mod:`swarmq.reaper`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.missions.history import read_beat
from swarmq.missions.ledger import Assignment, LedgerDoc, Mission
from swarmq.missions.states import MissionState
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
