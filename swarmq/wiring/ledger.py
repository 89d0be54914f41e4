"""Builds the swarm's mission ledger and a worker's mission runner from a roster: the
``missions:`` section, the worker's entry and the runtime, shared, profile and workspace roots."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from swarmq.missions.claim import RunOutcome
from swarmq.missions.context import KnowledgeProvider
from swarmq.missions.ledger import Ledger
from swarmq.missions.lifecycle import MissionRunner
from swarmq.missions.outcome import abandon_assignment
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks


def mission_ledger(roster: Roster, locks: StoreLocks) -> Ledger:
    """The roster's ledger (``<runtime>/swarm-missions.json``, retiring to ``<shared>``)."""
    return Ledger.for_swarm(
        roster.missions, runtime_dir=roster.runtime_dir, shared_dir=roster.shared_dir, locks=locks
    )


def mission_runner(
    roster: Roster,
    worker_id: str,
    locks: StoreLocks,
    *,
    knowledge: KnowledgeProvider | None = None,
    echo: BinaryIO | None = None,
    on_transcript: Callable[[RunOutcome], None] | None = None,
    after_start: Callable[[], object] | None = None,
) -> MissionRunner:
    """The runner of roster worker ``worker_id``'s assignments (``KeyError`` if none)."""
    return MissionRunner(
        roster.worker(worker_id),
        roster.missions,
        mission_ledger(roster, locks),
        locks,
        swarm=roster.swarm,
        workspace_dir=roster.workspace_dir,
        runtime_dir=roster.runtime_dir,
        profiles_dir=roster.profiles_dir,
        shared_dir=roster.shared_dir,
        knowledge=knowledge,
        echo=echo,
        on_transcript=on_transcript,
        after_start=after_start,
    )


def abandon(
    roster: Roster, locks: StoreLocks, mission_id: str, assignment_id: str, reason: str
) -> bool:
    """Settle an assignment of the roster's swarm that will never run again (dead-lettered)."""
    return abandon_assignment(
        mission_ledger(roster, locks),
        mission_id,
        assignment_id,
        reason,
        profiles_dir=roster.profiles_dir,
        shared_dir=roster.shared_dir,
    )
