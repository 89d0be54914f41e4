"""``missions.run``: one mission assignment on its worker's direct queue ``worker.<id>``.

Thin: finds which worker it runs on, has :func:`swarmq.wiring.missions.runner_with_knowledge` build
its runner and returns the outcome. Redelivery safety, the agent run and all memory writes live
in ``swarmq.missions``; the knowledge around a run in ``swarmq.wiring.missions``.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

from swarmq.missions.claim import RunOutcome
from swarmq.names import FORGE_EXTRACT, MISSIONS_RUN, direct_queue, worker_of_queue
from swarmq.storage.paths import check_id
from swarmq.wiring.ledger import abandon
from swarmq.wiring.missions import runner_with_knowledge
from swarmq.workers.app import app
from swarmq.workers.base import DeadLettered, SwarmTask


class MissionFailed(Exception):
    """The mission's agent failed (non-zero exit, timeout, could not start): raised after the
    failure is recorded in the ledger and the worker's memory, so the Celery task ends as
    ``FAILURE`` with the reason (Flower, ``AsyncResult.state``) instead of a green success."""


def _stdout() -> BinaryIO:
    """The worker process's real stdout (its tmux pane), not Celery's logging proxy."""
    return open(1, "wb", buffering=0, closefd=False)


class MissionTask(SwarmTask):
    """Marks the mission failed when its message is dead-lettered, so the ledger never strands it."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        if isinstance(exc, DeadLettered):
            mission_id = kwargs.get("mission_id") or (args[0] if args else None)
            assignment_id = kwargs.get("assignment_id") or (args[1] if len(args) > 1 else None)
            if mission_id and assignment_id:
                abandon(
                    self.roster,
                    self.cluster.locks,
                    mission_id,
                    assignment_id,
                    f"dead-lettered: {exc}",
                )
        super().on_failure(exc, task_id, args, kwargs, einfo)


def running_worker(task: SwarmTask) -> str | None:
    """``$SWARMQ_WORKER_ID``, else the worker named by the delivery's ``worker.<id>`` routing key."""
    env = os.environ.get("SWARMQ_WORKER_ID")
    if env:
        return env
    key = str((task.request.delivery_info or {}).get("routing_key") or "")
    return worker_of_queue(key)


def first_delivery(task: SwarmTask) -> bool:
    """Neither restored by the broker (a lost worker's unacked message) nor started before by
    this delivery round (the attempt counter, :mod:`swarmq.workers.base`)."""
    request = task.request
    if (request.delivery_info or {}).get("redelivered"):
        return False
    return int(getattr(request, "swarmq_deliveries", 1) or 1) <= 1


@app.task(
    name=MISSIONS_RUN, bind=True, base=MissionTask, ignore_result=True
)  # the ledger is the result
def run_mission(
    self: MissionTask,
    mission_id: str,
    assignment_id: str,
    worker_id: str | None = None,
    mission: dict[str, Any] | None = None,
    resent: bool = False,
) -> dict[str, Any]:
    """``mission`` is the record as the client created it: on a first delivery (not
    ``resent`` by a client-key retry, not redelivered by the broker) the agent starts before
    the claim is decided, see :mod:`swarmq.missions.claim`."""
    check_id(mission_id, "missionId")
    check_id(assignment_id, "assignmentId")
    here = running_worker(self)
    if worker_id is not None and here != check_id(worker_id, "workerId"):
        # Delivered to the wrong worker (e.g. sent to the family queue): forward, never run it here.
        self.app.send_task(
            MISSIONS_RUN,
            kwargs={
                "mission_id": mission_id,
                "assignment_id": assignment_id,
                "worker_id": worker_id,
                "mission": mission,
                "resent": resent or not first_delivery(self),
            },
            queue=direct_queue(worker_id),
            routing_key=direct_queue(worker_id),
            ignore_result=True,
        )
        return {"state": "forwarded", "to": worker_id, "from": here}
    if here is None:
        raise RuntimeError("cannot tell which worker this is: set SWARMQ_WORKER_ID")
    roster = self.roster

    def extract(outcome: RunOutcome) -> None:
        source = outcome.forge_source  # the agent's own session, else its stdout
        if roster.missions.extract_transcripts and source and FORGE_EXTRACT in self.app.tasks:
            # One transcript per assignment: its id keys forge's idempotency.
            self.app.send_task(
                FORGE_EXTRACT,
                kwargs={"path": source, "key": outcome.assignment_id},
                ignore_result=True,
            )

    # A broker restart must not fail a running agent: its locks wait the outage out.
    locks = self.cluster.locks.with_outage_grace(roster.missions.redis_outage_grace_seconds)
    runner = runner_with_knowledge(roster, here, locks, echo=_stdout(), after_run=extract)
    first = mission is not None and not resent and first_delivery(self)
    outcome = runner.run(mission_id, assignment_id, mission if first else None)
    if outcome.state == "failed":
        raise MissionFailed(
            f"mission {mission_id} assignment {assignment_id} failed on {here}: {outcome.reason}"
        )
    return outcome.as_dict()
