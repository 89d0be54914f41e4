"""The one-call entry point for prompt builders (the mission context loader).

``directives_block(roster, query, budget_chars, locks=...)`` returns the rendered
``<swarm_knowledge_directives>`` block for ``query`` within ``budget_chars`` (``""`` when nothing
fits). With ``locks`` (a worker passes ``self.cluster.locks``) the shown entries are committed
and counted like any injection; without, it is a read-only preview.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from swarmq.memory.knowledge.inject import inject
from swarmq.memory.knowledge.project import KnowledgeSettings, KnowledgeStore
from swarmq.memory.knowledge.query import QueryContext
from swarmq.memory.locking import LocalLocks, StoreLocks


class DirectiveSettings(KnowledgeSettings, Protocol):
    """The knowledge settings plus the runtime directory (same-host locks when none are given)."""

    @property
    def runtime_dir(self) -> Path: ...


def directives_block(
    roster: DirectiveSettings,
    query: str,
    budget_chars: int,
    *,
    locks: StoreLocks | None = None,
    phase: int | None = None,
    agent: str | None = None,
    session_id: str | None = None,
) -> str:
    config = roster.knowledge.model_copy(update={"inject_char_budget": max(0, budget_chars)})
    knowledge = KnowledgeStore(roster.swarm_dir, locks=locks or LocalLocks(roster.runtime_dir / "locks"),
                               config=config, data_dir=roster.hive_dir,
                               project_name=config.project_name or roster.workspace_dir.name)
    injection = inject(knowledge, QueryContext(text=query, phase=phase, agent=agent),
                       headroom=1.0, session_id=session_id, record=locks is not None)
    return injection.block or ""
