"""Runs one consolidation scope of a roster's swarm: its ``consolidation:`` section, the
AgentOps store, and the project's knowledge store (built only for a knowledge scope)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from swarmq.consolidation.knowledge import ProgressFn, ScopeReport
from swarmq.consolidation.scopes import check_scope, run_scope, scopes_for
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.wiring.knowledge import knowledge_store


def roster_scopes(roster: Roster) -> list[str]:
    """The scopes the roster's nightly consolidation covers, in run order."""
    return scopes_for(roster.consolidation, hive_enabled=roster.knowledge.hive_enabled)


def run_roster_scope(
    roster: Roster,
    locks: StoreLocks,
    scope: str,
    *,
    dry_run: bool = False,
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] | None = None,
    full: bool = False,
) -> ScopeReport:
    """Consolidate one scope of the roster's swarm (``dry_run``: plan only; ``full``: the whole
    store even where an incremental run is possible)."""
    knowledge = None if check_scope(scope) == "learnings" else knowledge_store(roster, locks)
    return run_scope(
        scope,
        config=roster.consolidation,
        locks=locks,
        agents_dir=roster.agents_dir,
        knowledge=knowledge,
        dry_run=dry_run,
        progress=progress,
        clock=clock,
        full=full,
    )
