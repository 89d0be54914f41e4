"""Builds a worker's :class:`~swarmq.missions.lifecycle.MissionRunner` with knowledge around it:
the directives block for the prompt (a pure read, recorded once the agent runs) and the
acknowledgement markers read back from the transcript when the run ends.

Missions and knowledge meet here, not in the Celery task, so the domain's callbacks during a
run (the knowledge block, its record, the acknowledgements) stay below the task layer; the
task passes only what needs Celery (sending the transcript to forge). Imports no Celery.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from swarmq.flywheel.confirm import record_exposure
from swarmq.knowledge.directives import prepare_directives
from swarmq.knowledge.inject import Injection
from swarmq.missions.claim import RunOutcome
from swarmq.missions.lifecycle import MissionRunner
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.wiring.flywheel import acknowledge_with_feedback, layout_for
from swarmq.wiring.knowledge import knowledge_store
from swarmq.wiring.ledger import mission_runner


class DeferredKnowledge:
    """The knowledge directives block for the prompt, built from a pure read; :meth:`record`
    (the runner's ``after_start``, once the agent runs) records what was shown like any
    injection, so the ledger's fsync and not the knowledge record stands before ``exec``; the
    flywheel lessons shown are then cited as exposure (σ moves; nothing is confirmed)."""

    def __init__(self, roster: Roster, locks: StoreLocks, agent: str | None = None) -> None:
        self.roster, self.locks, self.agent = roster, locks, agent
        self._pending: list[Callable[[], Injection]] = []

    def __call__(self, query: str, budget: int) -> str:
        prepared = prepare_directives(
            knowledge_store(self.roster, self.locks), query, budget, agent=self.agent
        )
        self._pending.append(prepared.record)
        return prepared.block

    def record(self) -> None:
        """Record every block handed out so far (each once; a failed one stays pending)."""
        while self._pending:
            injection = self._pending[0]()
            self._pending.pop(0)
            record_exposure(layout_for(self.roster), self.locks, injection)


def marker_lines(transcript: Path, limit: int = 1 << 20) -> str:
    """The transcript lines carrying acknowledgement markers (at most ``limit`` characters)."""
    out: list[str] = []
    size = 0
    try:
        with transcript.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
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
    knowledge = DeferredKnowledge(roster, locks, agent=agent)

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
