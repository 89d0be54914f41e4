"""The orchestrator's Python client for missions: submit, list, show, cancel, resume.

    from swarmq.client import MissionClient
    client = MissionClient.from_config("swarm.yaml")
    mission = client.submit("Fix the flaky parser test", role="builder", client_key="ticket-123")

Submits are idempotent by ``client_key``: retrying after a timeout returns the same mission (and
re-sends its queued assignment, which the worker runs at most once). Liveness comes from the
workers' presence keys in Redis (:mod:`swarmq.coord.presence`, one ``MGET``), confirmed by a
Celery ping only for a worker without one; the ledger is changed under its Redis store lock, the
same lock the workers take. A new mission's task is sent before its ledger commit and carries
the whole record, so the worker starts the agent without waiting for that commit; ``submit``
returns once the commit is durable (see docs/missions.md, "Dispatch").
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import redis

from swarmq.coord.connection import TRANSIENT
from swarmq.coord.presence import present
from swarmq.errors import Unavailable
from swarmq.missions.dispatch import (
    Committed,
    MissionSpec,
    cancel_mission,
    commit_created,
    create_mission,
    existing_for_key,
    resume_mission,
)
from swarmq.missions.history import write_beat
from swarmq.missions.ledger import Assignment, Ledger, LedgerDoc, Mission
from swarmq.missions.recovery import RunAlive
from swarmq.missions.routing import Target, check_target, route
from swarmq.missions.states import ACTIVE, MissionState
from swarmq.names import MISSIONS_RUN
from swarmq.profiles.events import (
    EventType,
    MissionEvent,
    append_events,
    event_id,
    read_events,
)
from swarmq.profiles.layout import ProfileLayout
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.storage.paths import check_id
from swarmq.wiring.ledger import mission_ledger
from swarmq.workers import remote

if TYPE_CHECKING:
    from celery import Celery

LIVENESS_TTL_SECONDS = 3.0


class DispatchError(Unavailable, RuntimeError):
    """The mission is in the ledger but its task could not be sent (broker unreachable)."""


def _unqueued(mission: Mission, assignment_id: str, exc: Exception) -> str:
    """The broker refused the assignment's task: it failed and the mission is blocked, saying
    why (the returned reason)."""
    assignment = mission.assignment(assignment_id)
    reason = (
        f"could not queue {assignment.id} for {assignment.worker_id}: {type(exc).__name__}: {exc}"
    )
    assignment.move(MissionState.FAILED, reason)
    mission.move(MissionState.BLOCKED, reason, kind="dispatch")
    return reason


class MissionClient:
    def __init__(
        self, roster: Roster, *, celery: Celery | None = None, locks: StoreLocks | None = None
    ) -> None:
        self.roster = roster
        self._celery = celery
        self._locks = locks
        self._live: tuple[float, frozenset[str], set[str]] | None = None

    @classmethod
    def from_config(cls, path: Path | str | None = None) -> MissionClient:
        from swarmq.roster.loader import find_config, load_roster

        return cls(load_roster(find_config(path)))

    # -- services -----------------------------------------------------------------------------

    @property
    def celery(self) -> Celery:
        if self._celery is None:
            from swarmq.workers.app import create_app

            self._celery = create_app(self.roster)
        return self._celery

    @property
    def locks(self) -> StoreLocks:
        if self._locks is None:
            from swarmq.coord.cluster import Cluster

            # The ledger's roots exist before the lock discipline is checked, so they are marked
            # now: a root first marked by a worker while this client writes under its unmarked
            # name would get two lock names, and the second writer would be fenced off.
            for root in (self.roster.runtime_dir, self.roster.shared_dir):
                root.mkdir(parents=True, exist_ok=True)
            self._locks = Cluster.connect(self.roster.cluster_config(), timeout=2.0).locks
        return self._locks

    @property
    def ledger(self) -> Ledger:
        return mission_ledger(self.roster, self.locks)

    def read_ledger(self) -> Ledger:
        """For read-only calls: no Redis needed to read the ledger file."""
        return mission_ledger(self.roster, self._locks or _NoLocks())

    def live_workers(self, candidates: list[str], *, ping_only: bool = False) -> set[str]:
        """Which of ``candidates`` are running: a presence key, else a Celery ping answer
        (cached a few seconds). ``ping_only`` asks the nodes themselves, uncached: for moving
        work off a host that may have died, whose keys outlive it by their lease."""
        wanted = frozenset(candidates)
        if not wanted:
            return set()
        cached = self._live
        if (
            not ping_only
            and cached
            and cached[1] >= wanted
            and time.monotonic() - cached[0] < LIVENESS_TTL_SECONDS
        ):
            return cached[2] & wanted
        live: set[str] = set()
        if not ping_only:
            with contextlib.suppress(*TRANSIENT):
                live = present(self._redis(), self.roster.swarm, sorted(wanted))
        missing = wanted - live
        if missing:
            pattern = "^(" + "|".join(re.escape(c) for c in sorted(missing)) + ")@"
            nodes = remote.answering(
                self.celery,
                timeout=self.roster.missions.ping_timeout_seconds,
                limit=len(missing),
                pattern=pattern,
                matcher="pcre",
            )
            live |= {node.split("@", 1)[0] for node in nodes} & missing
        self._live = (time.monotonic(), wanted, live)
        return live

    def _redis(self) -> redis.Redis:
        client = getattr(self.locks, "client", None)
        if isinstance(client, redis.Redis):
            return client
        from swarmq.coord.cluster import current

        return current(self.roster.cluster_config()).client

    # -- orchestrator verbs -------------------------------------------------------------------

    def submit(
        self,
        objective: str,
        *,
        title: str | None = None,
        worker: str | None = None,
        role: str | None = None,
        specialty: str | None = None,
        client_key: str | None = None,
        mission_id: str | None = None,
    ) -> Mission:
        """Route, send the task carrying the whole new record, then commit it; returns once the
        ledger commit is durable (and raises if it fails: the worker may still create the
        mission from its message, see :mod:`swarmq.missions.claim`)."""
        spec = MissionSpec(
            objective, title, Target(worker, role, specialty), client_key, mission_id
        )
        spec.validate()
        check_target(self.roster.workers, spec.target)  # a typo writes nothing
        snapshot = self._snapshot(spec)  # a lock-free read: for the key, the load and the id
        if client_key is not None:  # a retry: answered from the read
            existing = existing_for_key(snapshot, client_key)
            if existing is not None:
                return self._redispatch(existing)
        live = self._liveness(spec.target)
        decision = route(
            self.roster.workers,
            spec.target,
            live=live,
            load=snapshot.load(),
            require_live=self.roster.missions.require_live_worker,
        )
        mission = create_mission(snapshot, spec, decision)
        failed = self._send_new(mission) if mission.state is MissionState.PLANNING else None
        with self.ledger.edit() as doc:  # after the send: its claim may have created it first
            mission, how = commit_created(doc, mission)
        if how is Committed.TAKEN:  # a concurrent submit with this client key won
            return self._redispatch(mission)
        if how is Committed.CLAIMED:  # its worker got the task (and maybe ran it) first
            return mission
        if failed is not None:
            raise failed
        if mission.state is not MissionState.PLANNING:
            self._profile_event(
                mission,
                EventType.BLOCKED,
                mission.reason or mission.state.value,
                key=f"route-{mission.state.value}",
                state=mission.state.value,
            )
        return mission

    def list(
        self, *, state: str | None = None, worker: str | None = None, limit: int | None = None
    ) -> list[Mission]:
        """Newest first: the ledger's missions plus retired ones from the index (never the archive).

        With ``limit`` the index is read from its end and only the ``limit`` most recently
        retired matches are considered, so a list costs O(limit), not O(missions ever).
        """
        wanted = MissionState(state) if state else None
        if worker is not None:
            check_id(worker, "workerId")
        ledger = self.read_ledger()
        current = ledger.read().missions

        def keep(record: dict[str, Any]) -> bool:
            if wanted is not None and record.get("state") != wanted.value:
                return False
            if worker is None:
                return True
            target = record.get("target") or {}
            return target.get("workerId") == worker or any(
                a.get("workerId") == worker for a in record.get("assignments") or []
            )

        found = {m.id: m for m in current.values() if keep(m.dump())}
        retired = 0
        for entry in ledger.history.index(newest_first=True):
            if limit and retired >= limit:
                break  # the limit most recently retired are enough
            if entry["id"] not in current and entry["id"] not in found and keep(entry):
                found[entry["id"]] = Mission.model_validate(entry)
                retired += 1
        missions = sorted(found.values(), key=lambda m: m.created_at, reverse=True)
        return missions[:limit] if limit else missions

    def get(self, mission_id: str) -> Mission:
        return self.read_ledger().read().get(mission_id)

    def show(self, mission_id: str) -> dict[str, Any]:
        """The ledger record plus the mission's events from each worker profile involved."""
        mission = self.get(mission_id)
        data = mission.dump()
        known = {w.id for w in self.roster.workers}
        named = [a.worker_id for a in mission.assignments] + [mission.target.get("workerId", "")]
        workers = [w for w in dict.fromkeys(named) if w in known]
        data["events"] = [
            event for w in workers for event in read_events(self._layout(w), mission.id)
        ]
        data["memory"] = {w: str(self._layout(w).mission_dir(mission.id)) for w in workers}
        return data

    def cancel(self, mission_id: str, reason: str = "cancelled by the orchestrator") -> Mission:
        with self.ledger.edit() as doc:
            mission = cancel_mission(doc, mission_id, reason)
        self._profile_event(
            mission, EventType.NOTE, f"cancelled: {reason}", key="cancel", state="cancelled"
        )
        return mission

    def resume(
        self,
        mission_id: str,
        *,
        worker: str | None = None,
        note: str | None = None,
        force: str | None = None,
        reroute: bool = False,
        only_if: Callable[[LedgerDoc], str | None] | None = None,
    ) -> Mission:
        """A new assignment from the last handoff; ``force`` (why) abandons a still-active one.

        ``reroute`` routes by the mission's original target (role/specialty) instead of pinning
        the worker of its last assignment: the reaper uses it to move work off a dead host.
        ``only_if`` is asked under the ledger lock, before anything changes: a reason it returns
        refuses the resume with :class:`~swarmq.missions.recovery.RunAlive` (the reaper's fence,
        :func:`~swarmq.missions.recovery.still_stale`).
        """
        current = self.get(mission_id)
        if worker:
            target = Target(worker)
        elif reroute:
            target = Target(
                current.target.get("workerId"),
                current.target.get("role"),
                current.target.get("specialty"),
            )
        else:
            target = Target(
                current.worker_id,
                None if current.worker_id else current.target.get("role"),
                None if current.worker_id else current.target.get("specialty"),
            )
        live = self._liveness(target, ping_only=force is not None)  # its host may have died
        abandoned = [a.id for a in current.assignments if a.state in ACTIVE] if force else []
        ledger = self.ledger
        with ledger.edit(defer_dir_sync=True) as doc:
            alive = only_if(doc) if only_if is not None else None
            if alive is not None:
                raise RunAlive(f"mission {mission_id} not resumed: {alive}")
            decision = route(
                self.roster.workers,
                target,
                live=live,
                load=doc.load(),
                require_live=self.roster.missions.require_live_worker,
            )
            mission = resume_mission(doc, mission_id, decision, note, force=force)
        try:  # as in submit: the task is sent while the directory syncs
            if mission.state is not MissionState.PLANNING:
                return mission
            for (
                assignment_id
            ) in abandoned:  # a run still going somewhere stops at its next heartbeat
                if mission.assignment(assignment_id).state is MissionState.FAILED:
                    write_beat(
                        self.roster.runtime_dir,
                        assignment_id,
                        {"token": "abandoned", "host": "resume --force"},
                    )
            return self._dispatch(mission)
        finally:
            ledger.sync()

    # -- internals ----------------------------------------------------------------------------

    def _liveness(self, target: Target, *, ping_only: bool = False) -> set[str] | None:
        candidates = [
            w.id
            for w in self.roster.workers
            if w.agent is not None
            and (
                w.id == target.worker_id
                if target.worker_id
                else (not target.role or w.role.casefold() == target.role.casefold())
                and (
                    not target.specialty
                    or (w.specialty or "").casefold() == target.specialty.casefold()
                )
            )
        ]
        if not candidates:
            return None
        return self.live_workers(candidates, ping_only=ping_only)

    def _redispatch(self, mission: Mission) -> Mission:
        current = mission.current
        if (
            mission.state is MissionState.PLANNING
            and current is not None
            and current.state is MissionState.PLANNING
        ):
            self._send(mission, current, resent=True)
        return mission

    def _send_new(self, mission: Mission) -> DispatchError | None:
        """Send a new mission's task; when the broker fails, the record (not yet committed)
        says so, failed assignment and blocked mission, and the error is returned to raise."""
        assignment = mission.current
        assert assignment is not None
        try:
            self._send(mission, assignment)
        except Exception as exc:
            error = DispatchError(_unqueued(mission, assignment.id, exc))
            error.__cause__ = exc
            return error
        return None

    def _dispatch(self, mission: Mission) -> Mission:
        assignment = mission.current
        assert assignment is not None
        try:
            self._send(mission, assignment)
        except Exception as exc:  # broker down: record why, keep the mission
            with self.ledger.edit() as doc:
                mission = doc.get(mission.id)
                reason = _unqueued(mission, assignment.id, exc)
            raise DispatchError(reason) from exc
        return mission

    def _send(self, mission: Mission, assignment: Assignment, *, resent: bool = False) -> None:
        """The task carries the mission record as it is now, so its worker starts the agent
        without reading the ledger; a re-send (``resent``) of a queued assignment carries none:
        its worker claims from the ledger before it starts anything."""
        worker = self.roster.worker(assignment.worker_id)
        options: dict[str, Any] = {}
        if worker.agent is not None:
            soft = worker.agent.timeout_seconds + self.roster.missions.kill_grace_seconds + 60
            options = {"soft_time_limit": soft, "time_limit": soft + 60}
        queue = worker.direct_queue
        kwargs: dict[str, Any] = {
            "mission_id": mission.id,
            "assignment_id": assignment.id,
            "worker_id": worker.id,
        }
        kwargs.update({"resent": True} if resent else {"mission": mission.dump()})
        self.celery.send_task(
            MISSIONS_RUN,
            kwargs=kwargs,
            task_id=assignment.id,
            queue=queue,
            routing_key=queue,
            ignore_result=True,
            **options,
        )

    def _snapshot(self, spec: MissionSpec) -> LedgerDoc:
        """The ledger read without its lock, when the submit needs it (a client key to look up,
        a role to balance, a caller-chosen id to check); a named worker's fresh mission needs none."""
        if (
            spec.client_key is None
            and spec.mission_id is None
            and spec.target.worker_id is not None
        ):
            return LedgerDoc()
        return self.read_ledger().read()

    def _layout(self, worker_id: str) -> ProfileLayout:
        return ProfileLayout(self.roster.profiles_dir, self.roster.shared_dir, worker_id)

    def _profile_event(
        self, mission: Mission, kind: EventType, summary: str, *, key: str, **extra: object
    ) -> None:
        """Mirror an orchestrator-side change into the worker's mission events (when it has one)."""
        worker_id = mission.worker_id
        if worker_id is None or all(w.id != worker_id for w in self.roster.workers):
            return
        assignment = mission.current.id if mission.current else None
        event = MissionEvent(
            kind,
            worker_id,
            mission.id,
            summary,
            assignment,
            id=event_id(mission.id, assignment, kind.value, key, len(mission.log)),
            extra=dict(extra),
        )
        append_events(self._layout(worker_id), self.locks, mission.id, [event])


class _NoLocks:
    """Reads never lock (the ledger is replaced whole); edits through it are a bug."""

    def hold(self, resource: str, *, timeout: float | None = None) -> Any:
        raise RuntimeError("read-only ledger handle: use MissionClient.ledger to edit")
