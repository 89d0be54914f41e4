"""Builds a project's knowledge store from a roster: its ``knowledge:`` section, the project's
``.swarm/`` directory and the hive root, under the store locks the caller holds."""

from __future__ import annotations

from pathlib import Path

from swarmq.knowledge.project import KnowledgeStore
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks


def recall_dir(roster: Roster) -> Path:
    """Where recall keeps the persisted signature indexes of the roster's stores."""
    return roster.runtime_dir / "recall"


def knowledge_store(roster: Roster, locks: StoreLocks) -> KnowledgeStore:
    """The roster's project knowledge (named by ``knowledge.project_name``, else by the
    workspace directory), embedding through ``llm.embedding_model`` when one is configured."""
    config = roster.knowledge
    embedder = None
    if roster.llm.embedding_model:  # an endpoint (httpx) only when one is configured
        from swarmq.llm.embeddings import build_embedder

        embedder = build_embedder(roster.llm)
    return KnowledgeStore(
        roster.swarm_dir,
        locks=locks,
        config=config,
        data_dir=roster.hive_dir,
        project_name=config.project_name or roster.workspace_dir.name,
        embedder=embedder,
        recall_dir=recall_dir(roster),
    )
