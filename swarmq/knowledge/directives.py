"""The one-call entry point for prompt builders (the mission context loader).

``directives_block(roster, query, budget_chars, locks=...)`` returns the rendered
``<swarm_knowledge_directives>`` block for ``query`` within ``budget_chars`` (``""`` when nothing
fits). With ``locks`` (a worker passes ``self.cluster.locks``) the shown entries are committed
and counted like any injection; without, it is a read-only preview.
``prepare_directives`` builds the same block without recording and returns the record to run
later (a mission shows the block to its agent first and records it once the agent runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypedDict, Unpack

from swarmq.knowledge.inject import Injection, prepare, record_injection
from swarmq.knowledge.project import KnowledgeSettings, KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.storage.locking import LocalLocks, StoreLocks


class DirectiveSettings(KnowledgeSettings, Protocol):
    """The knowledge settings plus the runtime directory (same-host locks when none are given)."""

    @property
    def runtime_dir(self) -> Path: ...


@dataclass(frozen=True, slots=True)
class PreparedDirectives:
    """A block built but not yet recorded; ``record()`` commits it like :func:`inject` would."""

    block: str
    record: Callable[[], Injection]


class DirectiveOptions(TypedDict, total=False):
    """Who asks and how the answer is recorded: the store locks (none: the block is not
    recorded), the plan phase, the agent and the session the block is shown to."""

    locks: StoreLocks | None
    phase: int | None
    agent: str | None
    session_id: str | None


def prepare_directives(
    roster: DirectiveSettings, query: str, budget_chars: int, **options: Unpack[DirectiveOptions]
) -> PreparedDirectives:
    """The block for ``query`` from a pure read; its ``record`` writes nothing without ``locks``."""
    locks, session_id = options.get("locks"), options.get("session_id")
    config = roster.knowledge.model_copy(update={"inject_char_budget": max(0, budget_chars)})
    knowledge = KnowledgeStore(roster.swarm_dir, locks=locks or LocalLocks(roster.runtime_dir / "locks"),
                               config=config, data_dir=roster.hive_dir,
                               project_name=config.project_name or roster.workspace_dir.name)
    context = QueryContext(text=query, phase=options.get("phase"), agent=options.get("agent"))
    injection = prepare(knowledge, context, headroom=1.0)

    def record() -> Injection:
        if locks is None:
            return injection
        return record_injection(knowledge, injection, context, session_id=session_id)

    return PreparedDirectives(injection.block or "", record)


def directives_block(
    roster: DirectiveSettings, query: str, budget_chars: int, **options: Unpack[DirectiveOptions]
) -> str:
    """The block for ``query``, recorded now (with ``locks``)."""
    prepared = prepare_directives(roster, query, budget_chars, **options)
    prepared.record()
    return prepared.block
