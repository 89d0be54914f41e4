"""The one-call entry point for prompt builders (the mission context loader).

``directives_block(knowledge, query, budget_chars)`` returns the rendered
``<swarm_knowledge_directives>`` block for ``query`` within ``budget_chars`` (``""`` when nothing
fits), its shown entries committed and counted like any injection under the store's locks;
``preview=True`` makes it a read-only preview that records nothing.
``prepare_directives`` builds the same block without recording and returns the record to run
later (a mission shows the block to its agent first and records it once the agent runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from swarmq.knowledge.inject import Injection, prepare, record_injection
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext


@dataclass(frozen=True, slots=True)
class PreparedDirectives:
    """A block built but not yet recorded; ``record()`` commits it like :func:`inject` would."""

    block: str
    record: Callable[[], Injection]


def prepare_directives(
    knowledge: KnowledgeStore,
    query: str,
    budget_chars: int,
    *,
    preview: bool = False,
    phase: int | None = None,
    agent: str | None = None,
    session_id: str | None = None,
) -> PreparedDirectives:
    """The block for ``query`` from a pure read, for ``agent`` at plan ``phase``; its ``record``
    commits it for ``session_id``, or writes nothing when this is a ``preview``."""
    budgeted = knowledge.config.model_copy(update={"inject_char_budget": max(0, budget_chars)})
    store = knowledge.with_config(budgeted)
    context = QueryContext(text=query, phase=phase, agent=agent)
    injection = prepare(store, context, headroom=1.0)

    def record() -> Injection:
        if preview:
            return injection
        return record_injection(store, injection, context, session_id=session_id)

    return PreparedDirectives(injection.block or "", record)


def directives_block(
    knowledge: KnowledgeStore,
    query: str,
    budget_chars: int,
    *,
    preview: bool = False,
    phase: int | None = None,
    agent: str | None = None,
    session_id: str | None = None,
) -> str:
    """The block for ``query``, recorded now (unless this is a ``preview``)."""
    prepared = prepare_directives(
        knowledge,
        query,
        budget_chars,
        preview=preview,
        phase=phase,
        agent=agent,
        session_id=session_id,
    )
    prepared.record()
    return prepared.block
