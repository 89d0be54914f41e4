"""Claiming an assignment run: under the ledger lock, before or (speculatively) after ``exec``.

:class:`Claimant` is the claim side of a :class:`~swarmq.missions.lifecycle.MissionRunner`
(its collaborator). The ordinary claim (:meth:`Claimant.claim`) decides under the ledger lock
before the agent starts. A task message that carries the mission record, on its first delivery,
starts the agent first (:meth:`Claimant.speculate`) and claims right after the spawn, so
nothing the client or the ledger does stands before ``exec``.

The speculative claim accepts only a first start: mission and assignment planning, never
claimed, meant for this worker. Anything else (cancelled meanwhile, a duplicate, a takeover)
raises :class:`ClaimRefused` before anything is written; the runner then stops the agent
(before any of its output is read or recorded) and claims the ordinary way, which skips, takes
over or cancels as it always did. (A knowledge block shown to the stopped agent is recorded
only if the ordinary claim then runs the agent: it was shown twice, and counts twice.)

**The mission is not in the ledger yet** when the submit's commit, which follows its send, has
not landed (usually: the worker wins the race to the lock) or never will (the client died after
sending). The claim then creates the mission from the message: it is the complete record as the
client created it, so a client crash after the send loses nothing, and the client's later
commit finds it and keeps it (:func:`~swarmq.missions.dispatch.commit_created`), claim
included. Creation is idempotent by mission id under the lock and never runs a mission twice: a
retired id is not re-created, and a client key already owned by another mission (two
concurrent submits with one key: whichever record reaches the ledger first owns it) refuses
the claim. Refusing instead would need a deadline to tell a slow commit from a dead client,
would kill the agent of a client that merely crashed, and would lose the mission.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.missions._runner import kill_group
from swarmq.missions.config import MissionsConfig
from swarmq.missions.context import in_background
from swarmq.missions.history import read_beat, write_beat
from swarmq.missions.ledger import Assignment, Ledger, LedgerDoc, Mission, MissionNotFound
from swarmq.missions.recovery import heartbeat_age
from swarmq.missions.states import ASSIGNMENT_SETTLED, TERMINAL, MissionState
from swarmq.storage.clock import iso
from swarmq.storage.procs import pid_alive

S = MissionState
SKIPPED = "skipped"


@dataclass
class RunOutcome:
    mission_id: str
    assignment_id: str
    worker_id: str
    state: str
    reason: str = ""
    exit_code: int | None = None
    attempt: int = 0
    transcript: str | None = None
    """The agent's stdout and stderr (markers, the pane)."""
    session: str | None = None
    """The agent's own session (Claude Code session file, Codex rollout), copied beside the
    stdout log when it was found (``agent.transcript``)."""
    session_missing: str | None = None
    """Why the agent's own session was looked for and not found."""
    archive: str | None = None

    @property
    def forge_source(self) -> str | None:
        """The transcript forge mines: the agent's session when there is one, else stdout."""
        return self.session or self.transcript

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class ClaimRefused(Exception):
    """A speculative start that is not a first start (see the module docstring)."""


def adopt(doc: LedgerDoc, mission_id: str, record: dict[str, Any]) -> Mission:
    """The ledger's mission, created from the task's ``record`` when the submit's own commit
    has not landed; :class:`ClaimRefused` when that would duplicate or revive a mission."""
    found = doc.missions.get(mission_id)
    if found is not None:
        return found
    mission = Mission.model_validate(record)
    if mission.id != mission_id:
        raise ClaimRefused(f"the task's record is mission {mission.id!r}, not {mission_id!r}")
    if doc.exists(mission_id):
        raise ClaimRefused(f"mission {mission_id} is retired; not created again from its task")
    key = mission.client_key
    owner = doc.key_owner(key) if key is not None else None
    if owner is not None:
        raise ClaimRefused(
            f"client key {key!r} belongs to mission {owner}; {mission_id} is not created"
        )
    return doc.add(mission)


def first_start(mission: Mission, assignment: Assignment, worker_id: str) -> str | None:
    """Why this is not the first start of ``assignment`` on ``worker_id`` (None when it is)."""
    if assignment.worker_id != worker_id:
        return f"assignment {assignment.id} belongs to {assignment.worker_id}, not {worker_id}"
    if (
        mission.state is not S.PLANNING
        or assignment.state is not S.PLANNING
        or assignment.claim
        or assignment.attempts
        or mission.current_assignment_id != assignment.id
    ):
        return (
            f"assignment {assignment.id} is {assignment.state.value} (attempt {assignment.attempts}), "
            f"mission {mission.state.value}: not a first start"
        )
    return None


class Later:
    """Work run by the first caller of :meth:`result` (later callers wait for it and see the
    same outcome): a claim committed on whichever thread needs it first."""

    def __init__(self, work: Callable[[], object]) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._done = False
        self._error: BaseException | None = None

    def result(self) -> None:
        with self._lock:
            if not self._done:
                try:
                    self._work()
                except BaseException as exc:
                    self._error = exc
                self._done = True
        if self._error is not None:
            raise self._error


@dataclass
class Claimant:
    """One run's claim on its assignment, made for one worker process: decided, committed and
    awaited here; the token says whose claim a heartbeat or settle is."""

    worker_id: str
    ledger: Ledger
    runtime_dir: Path
    config: MissionsConfig
    host: str
    pid: int
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    _commit: Future[None] | Later | None = field(default=None, init=False, repr=False)

    def renew(self) -> None:
        """Forget a refused speculative claim: a fresh token, nothing to commit."""
        self.token, self._commit = uuid.uuid4().hex, None

    def _apply_claim(self, mission: Mission, assignment: Assignment) -> None:
        """The claim's change to the records: executing, one more attempt, this run's claim."""
        assignment.attempts += 1
        if assignment.state is S.PLANNING:
            assignment.move(S.EXECUTING)
            assignment.started_at = iso()
        if mission.state is not S.EXECUTING:
            mission.move(
                S.EXECUTING,
                f"{self.worker_id} started {assignment.id} (attempt {assignment.attempts})",
                kind="start",
            )
        mission.current_assignment_id = assignment.id
        assignment.claim = {
            "host": self.host,
            "pid": self.pid,
            "token": self.token,
            "attempt": assignment.attempts,
            "heartbeatAt": iso(),
        }

    def speculate(
        self, mission_id: str, assignment_id: str, record: dict[str, Any]
    ) -> tuple[Mission, Assignment]:
        """The mission and assignment as the message has them, claimed in memory. The claim
        itself (:func:`adopt`, :func:`first_start`, commit, heartbeat file) runs at the first
        :meth:`claimed`, right after the spawn (the agent's first heartbeat), so it shares
        neither the GIL nor the lock's round trips with the work before ``exec``; it raises
        :class:`ClaimRefused` there when it was refused."""
        try:
            mission = Mission.model_validate(record)
            assignment = mission.assignment(assignment_id)
        except (ValueError, MissionNotFound) as exc:  # not a record to start from
            raise ClaimRefused(f"the task's mission record is unusable: {exc}") from exc
        reason = first_start(mission, assignment, self.worker_id)
        if mission.id != mission_id or reason is not None:
            raise ClaimRefused(
                reason or f"the task's record is mission {mission.id!r}, not {mission_id!r}"
            )
        self._apply_claim(mission, assignment)
        claim = dict(assignment.claim or {})

        def commit() -> None:
            with self.ledger.edit(
                defer_dir_sync=True
            ) as doc:  # directory synced once the agent runs
                stored = adopt(doc, mission_id, record)
                try:
                    current = stored.assignment(assignment_id)
                except MissionNotFound as exc:
                    raise ClaimRefused(str(exc)) from exc
                refused = first_start(stored, current, self.worker_id)
                if refused is not None:
                    raise ClaimRefused(refused)
                self._apply_claim(stored, current)
                current.claim = claim
            write_beat(self.runtime_dir, assignment_id, dict(claim))

        self._commit = Later(commit)
        return mission, assignment

    def _claim_alive(self, assignment_id: str, claim: dict[str, Any]) -> bool:
        fresh = (
            heartbeat_age(self.runtime_dir, assignment_id, claim) < self.config.stale_after_seconds
        )
        if claim.get("host") == self.host:
            return claim.get("pid") != self.pid and pid_alive(claim.get("pid")) and fresh
        return fresh

    def claim(self, mission_id: str, assignment_id: str) -> tuple[Mission, Assignment] | RunOutcome:
        """Decide the claim under the ledger lock; its commit (file fsync, rename, heartbeat file)
        goes on on a thread, still holding the lock, while the context loads and the agent starts.

        Exclusion comes from the lock, held until the rename makes the claim visible; durability
        is awaited (:meth:`claimed`) before anything is recorded, beaten or settled. A commit
        that fails stops the agent and fails the task like a failed claim did; a crash before it
        lands also killed the agent (it dies with this process) and the message is redelivered.
        """
        decided: Future[tuple[Mission, Assignment, object] | RunOutcome] = Future()

        def commit() -> None:
            try:
                self._commit_claim(mission_id, assignment_id, decided)
            except BaseException as exc:
                if not decided.done():
                    decided.set_exception(exc)
                raise

        self._commit = in_background(commit)
        claimed = decided.result()
        if isinstance(claimed, RunOutcome):
            self.claimed()
            return claimed
        mission, assignment, orphan = claimed
        if pid_alive(orphan):
            kill_group(int(orphan), self.config.kill_grace_seconds)  # type: ignore[call-overload]
        return mission, assignment

    def _commit_claim(
        self,
        mission_id: str,
        assignment_id: str,
        decided: Future[tuple[Mission, Assignment, object] | RunOutcome],
    ) -> None:
        orphan: object = None
        with self.ledger.edit(defer_dir_sync=True) as doc:  # directory synced once the agent runs
            try:
                mission = doc.get(mission_id)
                assignment = mission.assignment(assignment_id)
            except MissionNotFound as exc:
                decided.set_result(
                    RunOutcome(mission_id, assignment_id, self.worker_id, SKIPPED, str(exc))
                )
                return
            skip = self._skip_reason(mission, assignment)
            if skip is not None:
                decided.set_result(
                    RunOutcome(
                        mission_id,
                        assignment_id,
                        self.worker_id,
                        SKIPPED,
                        skip,
                        attempt=assignment.attempts,
                    )
                )
                return
            previous = assignment.claim or {}
            if previous.get("host") == self.host:
                beat = read_beat(self.runtime_dir, assignment_id)
                orphan = (
                    beat.get("agentPid") if beat.get("token") == previous.get("token") else None
                )
                orphan = orphan or previous.get("agentPid")
            self._apply_claim(mission, assignment)
            decided.set_result(
                (mission.model_copy(deep=True), assignment.model_copy(deep=True), orphan)
            )
        write_beat(self.runtime_dir, assignment_id, dict(assignment.claim or {}))

    def claimed(self) -> None:
        """Wait until the claim is in the ledger file and the heartbeat file (see :meth:`claim`);
        a speculative claim is made here, by the first caller (see :meth:`speculate`)."""
        if self._commit is None:
            return
        self._commit.result()  # a failed commit raises here, as the claim's edit itself did

    def _skip_reason(self, mission: Mission, assignment: Assignment) -> str | None:
        if assignment.worker_id != self.worker_id:
            return f"assignment {assignment.id} belongs to {assignment.worker_id}, not {self.worker_id}"
        if assignment.state in ASSIGNMENT_SETTLED:
            return f"assignment {assignment.id} already {assignment.state.value}; not run again"
        if mission.state in TERMINAL:
            if assignment.state is S.PLANNING:
                assignment.move(S.CANCELLED, f"mission {mission.state.value} before it started")
            return f"mission {mission.id} is {mission.state.value}"
        if assignment.claim and self._claim_alive(assignment.id, assignment.claim):
            claim = assignment.claim
            return (
                f"assignment {assignment.id} is running on {claim.get('host')} pid {claim.get('pid')} "
                f"(attempt {claim.get('attempt')}); this delivery is a duplicate"
            )
        return None
