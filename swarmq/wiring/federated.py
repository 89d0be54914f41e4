"""Builds the federated view of a roster's workspace (``swarmq.federated.stores.Stores``): its
knowledge store, its ``.agents/`` layout and its Swarm2 memory. A store the workspace does not
have yet answers nothing (``.agents/`` is looked for on each question, memory search indexes
roots that appear later), so a long-lived server sees a store created after it started."""

from __future__ import annotations

from swarmq.federated.stores import Stores
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.project import KnowledgeStore
from swarmq.profiles.search import memory_search
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.wiring.knowledge import knowledge_store


def workspace_stores(
    roster: Roster,
    locks: StoreLocks,
    *,
    knowledge: KnowledgeStore | None = None,
    worker_id: str | None = None,
) -> Stores:
    """Every store of the roster's workspace; ``knowledge`` reuses a store the caller keeps
    warm (the hook server, the MCP server)."""
    layout = AgentsLayout(roster.agents_dir)
    return Stores(
        workspace=layout.root.parent,
        knowledge=knowledge if knowledge is not None else knowledge_store(roster, locks),
        agents=layout,
        memory=memory_search(roster.profiles_dir, roster.shared_dir),
        worker_id=worker_id,
    )
