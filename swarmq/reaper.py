"""The mission reaper: a mission whose run died with its host is resumed elsewhere in minutes.

With the Redis broker a message taken by a host that then dies comes back only after the
transport's visibility timeout, and a mission's claim blocks a second run while its heartbeat is
fresh. The reaper closes the gap: for each executing assignment whose heartbeat is older than
``missions.reap_after_seconds`` it asks Celery whether the node that ran it (``<worker>@<host>``)
answers and still has that task active. If not, the assignment is settled failed with the reason
and the mission is resumed (a new assignment, from its last handoff) on a live worker chosen by
the mission's original target; with no live worker it waits and is retried on the next pass.
The resume is fenced: under the ledger lock it holds, the same claim must still be the only
active run and its heartbeat still stale (:func:`~swarmq.missions.recovery.still_stale`), so a
run that beat again while the reaper pinged is never abandoned alive.
The active beat runs it every ``missions.reap_every_seconds`` (:class:`ReapingBeatScheduler`, the
scheduler swarmq's Celery app names): in the beat, not as a queued task, so it is never stuck
behind a four-hour mission on a busy worker. ``swarmq mission reap`` runs a pass by hand.

It sits above the workers and beside the mission client because resuming a mission is the
client's job (ledger, routing, dispatch); the beat below knows only that it has duties.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from swarmq.missions.recovery import RunAlive, StaleRun, stale_runs, still_stale
from swarmq.missions.routing import Target, route
from swarmq.missions.states import MissionState
from swarmq.workers import remote
from swarmq.workers.beat import SingleBeatScheduler

if TYPE_CHECKING:
    from celery import Celery

    from swarmq.client import MissionClient
    from swarmq.roster.schema import Roster

log = logging.getLogger("swarmq.reaper")


@dataclass(frozen=True)
class Reaped:
    mission_id: str
    assignment_id: str
    node: str
    age_seconds: float
    action: str
    """``resumed`` (new assignment queued), ``waiting`` (no live worker yet) or ``alive``."""
    detail: str = ""

    def describe(self) -> str:
        return (
            f"{self.mission_id} {self.assignment_id} on {self.node} (heartbeat {self.age_seconds:.0f}s old): "
            f"{self.action}{': ' + self.detail if self.detail else ''}"
        )


def _target(run: StaleRun) -> Target:
    t = run.mission.target
    return Target(t.get("workerId"), t.get("role"), t.get("specialty"))


def _still_running(celery: Celery, node: str, task_id: str, timeout: float) -> bool | None:
    """Whether ``node`` reports ``task_id`` among its active tasks (a slow heartbeat, not a
    death); None when the node did not answer the inspection in time (busy, not known dead)."""
    with remote.connection(celery) as conn:
        inspect = celery.control.inspect(destination=[node], timeout=timeout, connection=conn)
        active = inspect.active() or {}
    if node not in active:
        return None
    return any(item.get("id") == task_id for item in active.get(node) or [])


def reap(client: MissionClient, *, older_than: float | None = None) -> list[Reaped]:
    """One pass; returns what it found and did."""
    roster = client.roster
    config = roster.missions
    grace = config.reap_after_seconds if older_than is None else older_than
    stale = stale_runs(client.read_ledger().read(), roster.runtime_dir, grace)
    if not stale:
        return []
    nodes = remote.answering(client.celery, timeout=config.ping_timeout_seconds)
    out = []
    for run in stale:
        base = (run.mission.id, run.assignment.id, run.node, run.age_seconds)
        if run.node in nodes:
            running = _still_running(
                client.celery, run.node, run.assignment.id, config.ping_timeout_seconds
            )
            if running is None:  # answered the ping, not the inspection: ask again next pass
                out.append(
                    Reaped(*base, "alive", "its node answers but did not list its tasks in time")
                )
                continue
            if running:
                out.append(Reaped(*base, "alive", "its node still runs it; heartbeat late"))
                continue
        target = _target(run)
        live = {node.split("@", 1)[0] for node in nodes}
        decision = route(roster.workers, target, live=live, load={}, require_live=True)
        if decision.worker_id is None or decision.state is not MissionState.PLANNING:
            out.append(Reaped(*base, "waiting", decision.reason))
            continue
        gone = "does not answer" if run.node not in nodes else "answers but no longer runs it"
        why = (
            f"reaped: {run.node} {gone} and its heartbeat is {run.age_seconds:.0f}s old "
            f"(> {grace:g}s); resuming elsewhere"
        )
        try:
            mission = client.resume(
                run.mission.id,
                force=why,
                reroute=True,
                only_if=partial(
                    still_stale, runtime_dir=roster.runtime_dir, run=run, older_than=grace
                ),
            )
        except RunAlive as alive:  # it beat again, or was claimed again, since the snapshot
            out.append(Reaped(*base, "alive", str(alive)))
            continue
        except Exception as exc:  # raced with a settle/cancel, or the broker is down: next pass
            out.append(Reaped(*base, "waiting", f"{type(exc).__name__}: {exc}"))
            continue
        current = mission.current
        out.append(
            Reaped(
                *base,
                "resumed" if mission.state is MissionState.PLANNING else "waiting",
                f"now {current.id} on {current.worker_id}" if current else mission.reason or "",
            )
        )
    return out


def reap_swarm(roster: Roster, celery: Celery) -> list[Reaped]:
    """A pass with the swarm's own Redis locks (what the beat calls)."""
    from swarmq.client import MissionClient
    from swarmq.coord.cluster import current

    return reap(MissionClient(roster, celery=celery, locks=current(roster.cluster_config()).locks))


class ReapingBeatScheduler(SingleBeatScheduler):
    """The single beat, plus a reaper pass every ``missions.reap_every_seconds`` while active."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._next_reap = 0.0
        super().__init__(*args, **kwargs)

    def run_duties(self) -> float:
        roster = self.app.swarmq_roster()
        every = float(roster.missions.reap_every_seconds)
        if every <= 0:
            return float("inf")
        now = time.monotonic()
        if now >= self._next_reap:
            self._next_reap = now + every
            try:
                for item in reap_swarm(roster, self.app):
                    log.warning("reaper: %s", item.describe())
            except Exception:  # the schedule must keep running whatever the reaper hits
                log.exception("reaper: pass failed; will retry in %ss", every)
        return max(0.5, self._next_reap - now)
