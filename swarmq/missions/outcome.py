"""How a finished agent run is judged and handed off (the mission state, the handoff text),
and how an assignment that will never run is settled."""

from __future__ import annotations

from pathlib import Path

from swarmq.missions._recorder import RunRecorder
from swarmq.missions._runner import AgentResult
from swarmq.missions.history import clear_beat
from swarmq.missions.ledger import Ledger, Mission
from swarmq.missions.states import ASSIGNMENT_SETTLED, TERMINAL, MissionState
from swarmq.profiles.events import EventType
from swarmq.profiles.handoffs import Handoff
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.summary import SummaryUpdate, update_summary
from swarmq.storage.clock import iso

S = MissionState


def judge(result: AgentResult, rec: RunRecorder, timeout: float) -> tuple[MissionState, str]:
    if result.error:
        return S.FAILED, result.error
    if result.stopped:
        return S.CANCELLED, result.stopped
    if result.timed_out:
        return S.FAILED, f"agent timed out after {timeout:g}s and was killed"
    code = result.exit_code
    if code is not None and code < 0:
        return S.FAILED, f"agent was killed by signal {-code}"
    if code:
        last = result.tail.strip().splitlines()[-1:] or [""]
        return S.FAILED, f"agent exited with status {code}" + (
            f": {last[0][:200]}" if last[0] else ""
        )
    if rec.state_hint is None:
        if rec.blocked:
            return S.BLOCKED, rec.blocked[-1]
        return S.COMPLETE, rec.result or "agent finished (exit 0)"
    if rec.state_hint is S.BLOCKED:
        return S.BLOCKED, rec.blocked[-1] if rec.blocked else "agent reported STATE: BLOCKED"
    if rec.state_hint is S.FAILED:
        return S.FAILED, rec.result or "agent reported STATE: FAILED"
    return rec.state_hint, rec.result or f"agent reported {rec.state_hint.value}"


def build_handoff(
    worker_id: str, mission: Mission, rec: RunRecorder, state: MissionState, reason: str
) -> Handoff:
    handoff = Handoff(
        worker_id,
        mission.id,
        current_state=f"{state.value}: {reason}",
        objective=mission.objective.strip(),
    )
    if rec.handoff_block:
        handoff.merge_markdown(rec.handoff_block)
    handoff.completed = handoff.completed or bullets(rec.checkpoints)
    handoff.files_touched = handoff.files_touched or bullets(rec.files)
    handoff.blockers = handoff.blockers or bullets(rec.blocked)
    handoff.next_action = handoff.next_action or rec.next_action or next_action(state, reason)
    return handoff


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def next_action(state: MissionState, reason: str) -> str:
    return {
        S.COMPLETE: "Nothing: the mission is complete; the orchestrator reviews the archive.",
        S.REVIEW: "Wait for the orchestrator's review, then resume with its feedback.",
        S.BLOCKED: f"Resolve the blocker ({reason}), then resume the mission.",
        S.CANCELLED: "Nothing: the mission was cancelled.",
    }.get(state, f"Investigate the failure ({reason}) in the transcript, then resume the mission.")


def abandon_assignment(
    ledger: Ledger,
    mission_id: str,
    assignment_id: str,
    reason: str,
    *,
    profiles_dir: Path,
    shared_dir: Path,
) -> bool:
    """Settle an assignment that will never run again (dead-lettered): failed, with an event in
    its worker's profile memory under ``profiles_dir``."""
    locks = ledger.locks
    with ledger.edit() as doc:
        mission = doc.get(mission_id)
        assignment = mission.assignment(assignment_id)
        if assignment.state in ASSIGNMENT_SETTLED:
            return False
        assignment.move(S.FAILED, reason)
        assignment.ended_at = iso()
        assignment.claim = None
        if mission.state not in TERMINAL and mission.current_assignment_id == assignment_id:
            mission.move(S.FAILED, reason, kind="settle")
        worker_id = assignment.worker_id
    clear_beat(ledger.runtime_dir, assignment_id)
    layout = ProfileLayout(profiles_dir, shared_dir, worker_id)
    rec = RunRecorder(layout, locks, mission_id, assignment_id)
    rec.record(rec.event(EventType.BLOCKED, reason, key="abandoned", state="failed", reason=reason))
    update_summary(
        layout, locks, mission_id, SummaryUpdate(status=S.FAILED.value, blockers=[reason])
    )
    return True
