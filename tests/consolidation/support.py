"""Knowledge stores and learnings stores built on disk for consolidation tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks


def entry(
    entry_id: str,
    lesson: str,
    *,
    created: str = "2026-01-01T00:00:00.000Z",
    phases: tuple[int, ...] = (1,),
    project: str = "p",
    status: str = "candidate",
    tags: list[str] | None = None,
    confidence: float = 0.6,
    outcomes: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": entry_id,
        "tier": "swarm",
        "lesson": lesson,
        "category": "process",
        "tags": tags or [],
        "scope": "global",
        "confidence": confidence,
        "status": status,
        "confirmed_by": [
            {
                "phase_number": p,
                "confirmed_at": f"2026-01-0{p}T00:00:00.000Z",
                "project_name": project,
            }
            for p in phases
        ],
        "retrieval_outcomes": outcomes
        or {"applied_count": 1, "succeeded_after_count": 0, "failed_after_count": 0},
        "schema_version": 1,
        "created_at": created,
        "updated_at": created,
        "project_name": project,
        "auto_generated": True,
        **extra,
    }


def write_store(root: Path, entries: list[dict[str, Any]]) -> KnowledgeStore:
    swarm = root / ".swarm"
    swarm.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
    (swarm / "knowledge.jsonl").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return open_store(root)


def open_store(root: Path) -> KnowledgeStore:
    return KnowledgeStore(
        root / ".swarm",
        locks=LocalLocks(root / "locks"),
        config=KnowledgeConfig(swarm_max_entries=None),
        data_dir=root / "hive",
    )


def entries_by_id(store: KnowledgeStore) -> dict[str, dict[str, Any]]:
    return {e.id: dict(e.data) for e in store.swarm.read().entries}


def learning_md(
    learning_id: str,
    body: str,
    *,
    date: str = "2026-01-10",
    utility: float = 0.5,
    rewards: int = 0,
    helpful: int = 0,
    harmful: int = 0,
    maturity: str = "provisional",
    confidence: float = 0.8,
) -> str:
    return (
        f"---\nid: {learning_id}\ntype: learning\ndate: {date}\ntier: silver\n"
        f"utility: {utility:.4f}\nconfidence: {confidence:.4f}\nmaturity: {maturity}\n"
        f"reward_count: {rewards}\nhelpful_count: {helpful}\nharmful_count: {harmful}\n"
        f"source_session: s1\n---\n\n# Learning: {body[:60]}\n\n## What We Learned\n\n{body}\n\n"
        "## Source\n\n- **Source**: unknown\n"
    )
