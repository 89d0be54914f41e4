"""One assignment run on its worker: claim, context, agent, markers, outcome, handoff, archive.

Before the agent's ``exec`` only what it needs happens: a lock-free profile check, the context
(the knowledge block a pure read) and the prompt file, plus, for any delivery but a first start,
the claim decided under the ledger lock (its commit goes on on a thread, lock held, while the
rest runs). A first start claims right after the spawn. Claiming is the runner's collaborator
:class:`~swarmq.missions.claim.Claimant`. Once the agent runs,
before its output is read (so they precede its markers): the claim's commit or the wait for it,
its directory fsync, the start's events, episodes and SUMMARY.md, then the knowledge block's
record (runtime.json at the first heartbeat); all are on disk before the run can settle.

Safe to run again for the same assignment (a redelivered message): a settled assignment is
skipped, a run still alive elsewhere is left alone, and a run whose worker died is taken over
with a ``resume`` event while every event already recorded keeps its id (nothing is duplicated).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from swarmq.missions._pulse import Pulse
from swarmq.missions._recorder import RunRecorder
from swarmq.missions._runner import AgentResult, build_argv, run_agent
from swarmq.missions.agentcli import (
    OutputReader,
    SessionFound,
    SessionMissing,
    SessionPlan,
    locate,
    prepare,
    resolve,
)
from swarmq.missions.claim import SKIPPED, Claimant, ClaimRefused, RunOutcome
from swarmq.missions.config import MissionsConfig, TranscriptSource, WorkerConfig
from swarmq.missions.context import (
    KnowledgeProvider,
    MissionContext,
    load_context,
    render_prompt,
)
from swarmq.missions.history import clear_beat, read_beat, stop_reason
from swarmq.missions.ledger import Assignment, Ledger, Mission
from swarmq.missions.outcome import build_handoff, judge, next_action
from swarmq.missions.states import TERMINAL, MissionState
from swarmq.profiles.archive import archive_mission
from swarmq.profiles.bootstrap import ensure_profile, profile_current
from swarmq.profiles.events import EventType
from swarmq.profiles.handoffs import write_handoff
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.runtime import update_runtime
from swarmq.profiles.summary import SummaryUpdate, update_summary
from swarmq.storage.atomic import write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import LockError, StoreLocks

S = MissionState
log = logging.getLogger(__name__)


def _marker_reader(source: TranscriptSource, rec: RunRecorder) -> Callable[[str], None]:
    """Feeds the recorder the text of each output line: a JSON event of the agent CLI
    (``--output-format json|stream-json``, ``exec --json``) is read for the text it carries."""

    reader = OutputReader(source)

    def on_line(line: str) -> None:
        for text in reader.texts(line):
            rec.feed(text)

    return on_line


@dataclass
class MissionRunner:
    """Runs assignments of one worker; the Celery task builds one per call."""

    worker: WorkerConfig
    """The worker's roster entry: its profile and the agent it runs."""
    config: MissionsConfig
    ledger: Ledger
    locks: StoreLocks
    swarm: str
    workspace_dir: Path
    runtime_dir: Path
    profiles_dir: Path
    shared_dir: Path
    knowledge: KnowledgeProvider | None = None
    echo: BinaryIO | None = None
    on_transcript: Callable[[RunOutcome], None] | None = None
    after_start: Callable[[], object] | None = None
    """Recorded once the agent runs, before the run can settle (the knowledge block's record)."""
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)

    def __post_init__(self) -> None:
        self.worker_id = self.worker.id
        self.layout = ProfileLayout(self.profiles_dir, self.shared_dir, self.worker_id)
        self.claims = Claimant(
            self.worker_id, self.ledger, self.runtime_dir, self.config, self.host, self.pid
        )
        self._after_start_error: str | None = None
        self._pulse: Pulse | None = None

    @property
    def token(self) -> str:
        """This run's claim token (in the ledger's claim and the heartbeat file)."""
        return self.claims.token

    # -- the run ------------------------------------------------------------------------------

    def run(
        self, mission_id: str, assignment_id: str, record: dict[str, Any] | None = None
    ) -> RunOutcome:
        """``record``, the mission as a first delivery of its task carries it, starts the agent
        before the claim is decided (:mod:`.claim`); a refused start stops the agent before its
        output is read and falls back to the ordinary claim."""
        if record is not None:
            try:
                return self._run(mission_id, assignment_id, record)
            except ClaimRefused as refused:
                log.info(
                    "mission %s %s: speculative start refused (%s); claiming from the ledger",
                    mission_id,
                    assignment_id,
                    refused,
                )
                self.claims.renew()
        return self._run(mission_id, assignment_id, None)

    def _run(
        self, mission_id: str, assignment_id: str, record: dict[str, Any] | None
    ) -> RunOutcome:
        # Stamps the heartbeat from the claim's landing (first beat) to the settle, whatever
        # the agent loop or a store lock waits for (see :mod:`._pulse`).
        self._pulse = Pulse(
            self.runtime_dir, assignment_id, self.token, self.config.heartbeat_seconds
        )
        try:
            return self._run_claimed(mission_id, assignment_id, record)
        finally:
            self._pulse.stop()

    def _run_claimed(
        self, mission_id: str, assignment_id: str, record: dict[str, Any] | None
    ) -> RunOutcome:
        if record is not None:
            mission, assignment = self.claims.speculate(mission_id, assignment_id, record)
        else:
            claimed = self.claims.claim(mission_id, assignment_id)
            if isinstance(claimed, RunOutcome):
                return claimed
            mission, assignment = claimed
        worker = self.worker
        if not profile_current(self.layout, worker, self.swarm):
            ensure_profile(self.layout, worker, self.swarm, self.locks)
        recorder = RunRecorder(self.layout, self.locks, mission_id, assignment_id)
        outcome = RunOutcome(
            mission_id,
            assignment_id,
            self.worker_id,
            S.EXECUTING.value,
            attempt=assignment.attempts,
        )
        try:
            if worker.agent is None:
                state, reason = (
                    S.FAILED,
                    (
                        f"worker {self.worker_id!r} has no agent command: add "
                        "agent.command to its entry in swarm.yaml"
                    ),
                )
                result = None
            else:
                result = self._run_agent(mission, assignment, recorder, outcome)
                recorder.close()
                if result.stopped and "cancel" not in result.stopped:
                    outcome.state, outcome.reason = SKIPPED, result.stopped
                    return outcome
                state, reason = judge(result, recorder, worker.agent.timeout_seconds)
        except Exception as exc:  # e.g. the task's soft time limit: settle, never strand it
            self.claims.claimed()  # ...unless the claim never landed: then the task fails as before
            state, reason, result = S.FAILED, f"run interrupted: {type(exc).__name__}: {exc}", None
        return self._finish(mission, assignment, recorder, outcome, state, reason, result)

    def _record_start(self, rec: RunRecorder, mission: Mission, assignment: Assignment) -> None:
        """The claim made durable, then the start's events (one append), episodes and SUMMARY.md.

        Runs on the output thread once the agent has started, before any of its output is
        applied (or from :meth:`_finish` when it never started); runtime.json is the beat's.
        """
        if rec.started:
            return
        self.claims.claimed()
        attempt = assignment.attempts
        events = []
        if attempt == 1 and mission.assignments and mission.assignments[0].id == assignment.id:
            events.append(
                rec.event(
                    EventType.MISSION_START,
                    f"Mission started: {mission.title}",
                    key="mission-start",
                    title=mission.title,
                )
            )
        if attempt == 1:
            events.append(
                rec.event(
                    EventType.DISPATCH,
                    f"Dispatched to {self.worker_id}: {mission.title}",
                    key="dispatch",
                )
            )
            if assignment.resume:
                events.append(
                    rec.event(
                        EventType.RESUME,
                        "resumed by the orchestrator from the latest handoff",
                        key="resume",
                    )
                )
        else:
            events.append(
                rec.event(
                    EventType.RESUME,
                    f"redelivered (attempt {attempt}) after the previous "
                    "run stopped; continuing from the last checkpoint",
                    key=f"redelivery-{attempt}",
                )
            )
        self.ledger.sync()
        rec.record_all(events)
        update_summary(
            self.layout,
            self.locks,
            mission.id,
            SummaryUpdate(status=S.EXECUTING.value, assignment_id=assignment.id),
            title=mission.title,
            objective=mission.objective,
        )
        rec.started = True  # runtime.json says executing from the first heartbeat on
        self._after_start()

    def _after_start(self) -> None:
        """Run ``after_start`` (the knowledge block's record); again from :meth:`_finish` if it
        failed. Knowledge is optional context: a record that fails twice is a mission event and a
        warning, not a failed mission."""
        if self.after_start is None:
            return
        try:
            self.after_start()
            self._after_start_error = None
        except Exception as exc:
            self._after_start_error = f"{type(exc).__name__}: {exc}"
            log.warning(
                "mission run: could not record what it showed the agent: %s",
                self._after_start_error,
            )

    def _run_agent(
        self, mission: Mission, assignment: Assignment, rec: RunRecorder, outcome: RunOutcome
    ) -> AgentResult:
        agent = self.worker.agent
        assert agent is not None
        ctx = self._load_context(mission)  # while the claim commits
        prompt = render_prompt(
            self.layout,
            mission,
            assignment,
            ctx,
            resume=assignment.attempts > 1 or assignment.resume,
            budget_chars=self.config.context_budget_chars,
        )
        prompt_file = self.layout.mission_dir(mission.id) / f"prompt-{assignment.id}.txt"
        write_atomic(prompt_file, prompt, durable=False)  # derived: a rerun writes it again
        transcript = self.layout.transcript(mission.id, assignment.id)
        outcome.transcript = str(transcript)
        values = {
            "prompt": prompt,
            "prompt_file": str(prompt_file),
            "worker_id": self.worker_id,
            "mission_id": mission.id,
            "assignment_id": assignment.id,
        }
        env = {
            **os.environ,
            **agent.env,
            "HERMES_HOME": str(self.layout.root),
            "SWARMQ_WORKER_ID": self.worker_id,
            "SWARMQ_MISSION_ID": mission.id,
            "SWARMQ_ASSIGNMENT_ID": assignment.id,
            "SWARMQ_MISSION_DIR": str(self.layout.mission_dir(mission.id)),
            "SWARMQ_ATTEMPT": str(assignment.attempts),
        }
        cwd = Path(os.path.abspath(agent.cwd or self.workspace_dir))
        source = resolve(agent.transcript, agent.command)
        plan = prepare(
            source, build_argv(agent.command, values), cwd=cwd, env=env, started=time.time()
        )
        result = run_agent(
            plan.argv,
            env=env,
            cwd=cwd,
            timeout=agent.timeout_seconds,
            transcript=transcript,
            on_line=_marker_reader(source, rec),
            on_start=lambda pid: self._beat(mission.id, assignment.id, agent_pid=pid),
            before_output=lambda: self._record_start(rec, mission, assignment),
            heartbeat=lambda: self._beat(mission.id, assignment.id),
            heartbeat_seconds=self.config.heartbeat_seconds,
            echo=self.echo if self.config.echo_output else None,
            echo_prefix=f"[{self.worker_id} {mission.id}] ",
            kill_grace=self.config.kill_grace_seconds,
        )
        taken_over = result.stopped is not None and "cancel" not in result.stopped
        if result.error is None and not taken_over:  # a run that was taken over settles nothing
            self._keep_session(plan, transcript, mission.id, assignment.id, rec, outcome)
        return result

    def _keep_session(
        self,
        plan: SessionPlan,
        output: Path,
        mission_id: str,
        assignment_id: str,
        rec: RunRecorder,
        outcome: RunOutcome,
    ) -> None:
        """Copy the agent's own session beside the stdout log, for forge (any worker host
        reads the profiles root; the CLI's own copy may be cleaned up). When it cannot be
        found, forge gets the stdout log and the mission says why."""
        if plan.source is TranscriptSource.STDOUT:
            return
        try:
            found: SessionFound | SessionMissing = locate(plan, output)
        except Exception as exc:  # a lookup that breaks must not fail the mission: say so
            found = SessionMissing(f"looking for it failed: {type(exc).__name__}: {exc}")
        if isinstance(found, SessionFound):
            target = self.layout.mission_dir(mission_id) / f"session-{assignment_id}.ndjson"
            try:
                write_atomic(target, found.path.read_bytes())
            except OSError as exc:
                found = SessionMissing(f"{found.path} could not be copied to {target}: {exc}")
            else:
                outcome.session = str(target)
                rec.record(
                    rec.event(
                        EventType.NOTE,
                        f"agent session {found.session_id or found.path.stem} kept for forge: "
                        f"{target.name} (from {found.path})",
                        key=f"agent-session-{outcome.attempt}",
                        session=str(target),
                        source=str(found.path),
                    ),
                    episode=False,
                )
                return
        outcome.session_missing = found.reason
        log.warning(
            "mission %s %s: %s session not found (%s); forge gets the stdout log",
            mission_id,
            assignment_id,
            plan.source.value,
            found.reason,
        )
        rec.record(
            rec.event(
                EventType.NOTE,
                f"agent session not found, forging the stdout log instead: {found.reason}",
                key=f"agent-session-{outcome.attempt}",
                reason=found.reason,
            ),
            episode=False,
        )

    def _load_context(self, mission: Mission) -> MissionContext:
        """Loaded while the claim commits (:meth:`Claimant.claim`); the knowledge block is a pure read,
        recorded by ``after_start`` once the agent runs."""
        ctx = load_context(
            self.layout,
            mission,
            recall_budget_chars=self.config.recall_budget_chars,
            knowledge_budget_chars=self.config.knowledge_budget_chars,
            knowledge=self.knowledge,
        )
        # What runtime.json says once the start is recorded (after exec): this run.
        ctx.runtime.update(state=S.EXECUTING.value, currentMissionId=mission.id)
        return ctx

    def _beat(
        self, mission_id: str, assignment_id: str, agent_pid: int | None = None
    ) -> str | None:
        """Stamp the heartbeat file; say why to stop when the mission was cancelled or taken over.

        O(1) in the ledger's size: the heartbeat, the takeover check (whoever claims the run
        next rewrites the file with its token) and the cancel check (a stop file) are per-run files.
        """
        self.claims.claimed()
        pulse = self._pulse
        if pulse is None:  # beaten outside :meth:`run` (a test, a tool): a pulse of its own
            pulse = self._pulse = Pulse(
                self.runtime_dir, assignment_id, self.token, self.config.heartbeat_seconds
            )
        pulse.start()  # the claim is on disk: from here on the pulse keeps the stamp fresh
        runtime = self.runtime_dir
        beat = read_beat(runtime, assignment_id)
        if beat.get("token") not in (None, self.token):
            return f"claim on {assignment_id} was taken over by {beat.get('host')} pid {beat.get('pid')}"
        stop = stop_reason(runtime, mission_id)
        if stop is not None:
            return f"mission cancelled: {stop}"
        extra: dict[str, Any] = {"host": self.host, "pid": self.pid, "token": self.token}
        if agent_pid is not None:
            extra["agentPid"] = agent_pid
        pulse.stamp(create=True, **extra)
        # runtime.json is a view: one try for its lock, which a dead host (same worker id) may
        # keep for a lease period; waiting would stall the beat and get the run reaped. Each
        # beat writes the whole running state, so a skipped one is repaired by the next.
        with contextlib.suppress(LockError):
            update_runtime(
                self.layout,
                self.locks,
                lock_timeout=0,
                state=S.EXECUTING.value,
                currentMissionId=mission_id,
                currentAssignmentId=assignment_id,
                heartbeatAt=iso(),
                host=self.host,
                pid=self.pid,
            )
        return None

    # -- settle -------------------------------------------------------------------------------

    def _finish(
        self,
        mission: Mission,
        assignment: Assignment,
        rec: RunRecorder,
        outcome: RunOutcome,
        state: MissionState,
        reason: str,
        result: AgentResult | None,
    ) -> RunOutcome:
        self._record_start(rec, mission, assignment)  # the agent never started, or recording failed
        if self._after_start_error is not None:
            self._after_start()
            if self._after_start_error is not None:
                rec.record(
                    rec.event(
                        EventType.NOTE,
                        f"knowledge directives shown but not recorded: {self._after_start_error}",
                        key="knowledge-record",
                    ),
                    episode=False,
                )
        outcome.state, outcome.reason = state.value, reason
        outcome.exit_code = result.exit_code if result else None
        key = f"final-{state.value}"
        if state is S.COMPLETE:
            rec.record(
                rec.event(EventType.COMPLETE, reason, key=key, state="complete"), result=reason
            )
        elif state is S.REVIEW:
            rec.record(
                rec.event(EventType.NOTE, f"ready for review: {reason}", key=key, state="review")
            )
        elif state is S.CANCELLED:
            rec.record(rec.event(EventType.NOTE, reason, key=key, state="cancelled"))
        elif not (state is S.BLOCKED and rec.blocked):
            rec.record(
                rec.event(EventType.BLOCKED, reason, key=key, state=state.value, reason=reason)
            )
        text = build_handoff(self.worker_id, mission, rec, state, reason).render()
        write_handoff(self.layout, self.locks, mission.id, text)
        rec.record(
            rec.event(
                EventType.HANDOFF_WRITTEN, f"handoff written ({state.value})", key="final-handoff"
            ),
            episode=False,
        )
        update_summary(
            self.layout,
            self.locks,
            mission.id,
            SummaryUpdate(
                status=state.value,
                assignment_id=assignment.id,
                next_action=rec.next_action or next_action(state, reason),
            ),
        )
        if not self._settle(mission.id, assignment.id, state, reason, outcome):
            outcome.state, outcome.reason = SKIPPED, "claim was taken over before the run settled"
            return outcome
        done = state in (S.COMPLETE, S.CANCELLED)
        update_runtime(
            self.layout,
            self.locks,
            state="idle",
            heartbeatAt=iso(),
            lastMissionId=mission.id,
            lastOutcome=state.value,
            currentMissionId=None if done else mission.id,
            currentAssignmentId=None,
        )
        if state is S.COMPLETE and self.config.archive_completed:
            record = self.ledger.read().get(mission.id).dump()
            outcome.archive = str(archive_mission(self.layout, self.locks, mission.id, record))
        if self.on_transcript is not None and outcome.transcript:
            self.on_transcript(outcome)
        return outcome

    def _settle(
        self,
        mission_id: str,
        assignment_id: str,
        state: MissionState,
        reason: str,
        outcome: RunOutcome,
    ) -> bool:
        with self.ledger.edit() as doc:
            mission = doc.get(mission_id)
            assignment = mission.assignment(assignment_id)
            if (assignment.claim or {}).get("token") != self.token:
                return False
            assignment.move(state, reason)
            assignment.ended_at = iso()
            assignment.exit_code = outcome.exit_code
            assignment.transcript = outcome.transcript
            assignment.session = outcome.session
            assignment.claim = None
            if mission.state not in TERMINAL and mission.current_assignment_id == assignment_id:
                mission.move(state, reason, kind="settle")
            elif mission.state is S.CANCELLED:
                mission.note(f"assignment {assignment_id} stopped: {reason}", kind="settle")
        if self._pulse is not None:
            self._pulse.stop()  # settled: never stamped again (nor the file written back)
        clear_beat(self.runtime_dir, assignment_id)
        return True
