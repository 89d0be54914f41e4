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

from swarmq.consolidation._learnings import consolidate_learnings
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import ProgressFn, ScopeReport, consolidate_tier
from swarmq.errors import InvalidInput
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import StoreLocks

SCOPES: tuple[str, ...] = ("swarm", "hive", "learnings")


class UnknownScope(InvalidInput):
    """A scope name that is neither ``swarm``, ``hive``, ``learnings`` nor a known project."""


def scopes_for(config: ConsolidationConfig, *, hive_enabled: bool) -> list[str]:
    """The scopes a nightly consolidation under ``config`` covers, in run order (the hive only
    when ``knowledge.hive_enabled`` too)."""
    if not config.enabled:
        return []
    out = ["swarm"]
    if config.hive and hive_enabled:
        out.append("hive")
    if config.learnings:
        out.append("learnings")
    return out


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise UnknownScope(f"unknown consolidation scope {scope!r}; known: {', '.join(SCOPES)}")
    return scope


def run_scope(
    scope: str,
    *,
    config: ConsolidationConfig,
    locks: StoreLocks,
    agents_dir: Path,
    knowledge: KnowledgeStore | None,
    dry_run: bool = False,
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] | None = None,
    full: bool = False,
) -> ScopeReport:
    """Consolidate one scope (``dry_run``: plan only): the project's ``knowledge`` tier for
    ``swarm`` and ``hive`` (required for those), the AgentOps store at ``agents_dir`` for
    ``learnings`` (always a full pass). ``full``: a knowledge tier is joined whole even where
    its watermark allows an incremental run."""
    check_scope(scope)
    if scope == "learnings":
        return consolidate_learnings(
            AgentsLayout(agents_dir),
            locks,
            config,
            scope=scope,
            dry_run=dry_run,
            progress=progress,
            clock=clock,
        )
    if knowledge is None:
        raise ValueError(f"consolidation scope {scope!r} needs the project's knowledge store")
    tier = knowledge.swarm if scope == "swarm" else knowledge.hive
    return consolidate_tier(
        tier, config, scope=scope, dry_run=dry_run, progress=progress, clock=clock, full=full
    )
