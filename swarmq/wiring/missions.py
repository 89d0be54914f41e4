"""Builds a worker's :class:`~swarmq.missions.lifecycle.MissionRunner` with knowledge around it:
the directives block for the prompt (a pure read, recorded once the agent runs) and the
acknowledgement markers read back from the transcript when the run ends.

Missions and knowledge meet here, not in the Celery task, so the domain's callbacks during a
run (the knowledge block, its record, the acknowledgements) stay below the task layer; the
task passes only what needs Celery (sending the transcript to forge: the agent's own session
when the run kept one, :attr:`~swarmq.missions.claim.RunOutcome.forge_source`). Imports no Celery.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from swarmq.federated.inject import FederatedInjection, prepare, record
from swarmq.knowledge.query import QueryContext
from swarmq.missions.agentcli import OutputReader
from swarmq.missions.claim import RunOutcome
from swarmq.missions.config import TranscriptSource
from swarmq.missions.lifecycle import MissionRunner
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.wiring.federated import workspace_stores
from swarmq.wiring.flywheel import acknowledge_with_feedback
from swarmq.wiring.knowledge import knowledge_store
from swarmq.wiring.ledger import mission_runner


class DeferredKnowledge:
    """The knowledge directives block for the prompt, built from a pure read of every store of
    the workspace (knowledge entries, learnings, patterns, pool candidates, the worker's own and
    the shared memory: ``swarmq.federated.inject.prepare``, as the prompt hook asks them);
    :meth:`record` (the runner's ``after_start``, once the agent runs) records what was shown
    like any injection, so the ledger's fsync and not the knowledge record stands before
    ``exec``; the flywheel artifacts behind what was shown are cited as exposure (σ moves;
    nothing is confirmed)."""

    def __init__(
        self,
        roster: Roster,
        locks: StoreLocks,
        agent: str | None = None,
        worker_id: str | None = None,
    ) -> None:
        self.roster, self.locks, self.agent, self.worker_id = roster, locks, agent, worker_id
        self._pending: list[Callable[[], FederatedInjection]] = []

    def __call__(self, query: str, budget: int) -> str:
        knowledge = knowledge_store(self.roster, self.locks)
        budgeted = knowledge.config.model_copy(update={"inject_char_budget": max(0, budget)})
        stores = workspace_stores(
            self.roster,
            self.locks,
            knowledge=knowledge.with_config(budgeted),
            worker_id=self.worker_id,
        )
        context = QueryContext(text=query, agent=self.agent)
        injection = prepare(stores, context)
        self._pending.append(lambda: record(stores, injection, context))
        return injection.block or ""

    def record(self) -> None:
        """Record every block handed out so far (each once; a failed one stays pending)."""
        while self._pending:
            self._pending[0]()
            self._pending.pop(0)


def marker_lines(transcript: Path, limit: int = 1 << 20) -> str:
    """The transcript lines carrying acknowledgement markers (at most ``limit`` characters)."""
    out: list[str] = []
    size = 0
    # The JSON events of Claude Code (``--output-format json|stream-json``) and Codex
    # (``exec --json``) are read for the text they carry, each text once.
    readers = [OutputReader(TranscriptSource.CLAUDE_CODE), OutputReader(TranscriptSource.CODEX)]
    try:
        with transcript.open(encoding="utf-8", errors="replace") as handle:
            for raw in handle:
                decoded = next((t for r in readers if (t := r.decode(raw)) is not None), [raw])
                for text in decoded:
                    line = text if text.endswith("\n") else text + "\n"
                    if "KNOWLEDGE_" in line and size < limit:
                        out.append(line)
                        size += len(line)
    except FileNotFoundError:
        return ""
    return "".join(out)


def acknowledge_transcript(
    roster: Roster, locks: StoreLocks, outcome: RunOutcome, *, agent: str | None
) -> None:
    """Close the loop on the directives the agent acknowledged in its transcript, if any (and
    feed those of flywheel lessons back to the lessons)."""
    if not outcome.transcript:
        return
    markers = marker_lines(Path(outcome.transcript))
    if markers:
        acknowledge_with_feedback(roster, locks, markers, source="mission_agent", agent=agent)


def runner_with_knowledge(
    roster: Roster,
    worker_id: str,
    locks: StoreLocks,
    *,
    echo: BinaryIO | None = None,
    after_run: Callable[[RunOutcome], None] | None = None,
) -> MissionRunner:
    """The runner for one delivery on ``worker_id``: the knowledge block in its prompt, recorded
    once the agent runs, and the agent's acknowledgements applied before ``after_run`` (the
    caller's own use of the finished transcript) is called."""
    agent = roster.worker(worker_id).role.lower()
    knowledge = DeferredKnowledge(roster, locks, agent=agent, worker_id=worker_id)

    def on_transcript(outcome: RunOutcome) -> None:
        acknowledge_transcript(roster, locks, outcome, agent=agent)
        if after_run is not None:
            after_run(outcome)

    return mission_runner(
        roster,
        worker_id,
        locks,
        knowledge=knowledge,
        echo=echo,
        on_transcript=on_transcript,
        after_start=knowledge.record,
    )
