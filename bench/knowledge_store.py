"""The knowledge store the add benchmarks start from: a store as found on disk (written without
validation), its configuration, and warming it the way a worker's first add would."""

from __future__ import annotations

from pathlib import Path

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson, new_entry
from swarmq.storage.clock import iso

CONFIG = KnowledgeConfig(swarm_max_entries=None, hive_enabled=False, rejected_max_entries=10**9)


def build_store(path: Path, lessons: list[str]) -> None:
    """Write ``lessons`` as curator-shaped entries (no validation: a store as found on disk)."""
    at = iso()
    lines = [
        new_entry(
            NewLesson(text or "(empty)"),
            tier=Tier.SWARM,
            project_name="bench",
            phase=1,
            at=at,
            config=CONFIG,
        ).line()
        for text in lessons
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def warm(knowledge: KnowledgeStore) -> None:
    """Load the mirror and build the near-duplicate and contradiction indexes."""
    knowledge.swarm.warm()
