"""The scopes one swarm consolidates each night, and running one of them.

* ``swarm`` — the project's knowledge tier (``.swarm/knowledge.jsonl``, or the link store the
  worktree is linked to);
* ``hive`` — the cross-project tier (when both ``consolidation.hive`` and ``knowledge.hive_enabled``);
* ``learnings`` — the project's AgentOps learnings and patterns (``consolidation.learnings``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import ProgressFn, ScopeReport, consolidate_tier
from swarmq.consolidation.learnings import consolidate_learnings
from swarmq.errors import InvalidInput
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.project import KnowledgeSettings, KnowledgeStore
from swarmq.storage.locking import StoreLocks


class ConsolidationSettings(KnowledgeSettings, Protocol):
    """What consolidation needs of the swarm's settings: the knowledge store's, plus its own
    section and the AgentOps store (for the learnings scope)."""

    @property
    def consolidation(self) -> ConsolidationConfig: ...
    @property
    def agents_dir(self) -> Path: ...

SCOPES: tuple[str, ...] = ("swarm", "hive", "learnings")


class UnknownScope(InvalidInput):
    """A scope name that is neither ``swarm``, ``hive``, ``learnings`` nor a known project."""


def scopes_for(roster: ConsolidationSettings) -> list[str]:
    """The scopes this roster's nightly consolidation covers, in run order."""
    config = roster.consolidation
    if not config.enabled:
        return []
    out = ["swarm"]
    if config.hive and roster.knowledge.hive_enabled:
        out.append("hive")
    if config.learnings:
        out.append("learnings")
    return out


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise UnknownScope(f"unknown consolidation scope {scope!r}; known: {', '.join(SCOPES)}")
    return scope


def run_scope(
    roster: ConsolidationSettings,
    locks: StoreLocks,
    scope: str,
    *,
    dry_run: bool = False,
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] | None = None,
) -> ScopeReport:
    """Consolidate one scope of the roster's swarm (``dry_run``: plan only)."""
    config = roster.consolidation
    check_scope(scope)
    if scope == "learnings":
        return consolidate_learnings(AgentsLayout(roster.agents_dir), locks, config, scope=scope,
                                     dry_run=dry_run, progress=progress, clock=clock)
    knowledge = KnowledgeStore.for_roster(roster, locks)
    tier = knowledge.swarm if scope == "swarm" else knowledge.hive
    return consolidate_tier(tier, config, scope=scope, dry_run=dry_run, progress=progress,
                            clock=clock)
