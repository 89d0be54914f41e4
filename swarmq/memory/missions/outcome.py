"""How a finished agent run is judged and handed off (the mission state, the handoff text)."""

from __future__ import annotations

from swarmq.memory.missions.ledger import Mission
from swarmq.memory.missions.recorder import RunRecorder
from swarmq.memory.missions.runner import AgentResult
from swarmq.memory.missions.states import MissionState
from swarmq.memory.profiles.handoffs import Handoff

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
