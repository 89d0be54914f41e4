"""Knowledge entries and stores on disk for the skills and curator tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.store import TierStore
from swarmq.storage.locking import LocalLocks

AT = "2026-05-01T10:00:00.000Z"


def entry(
    entry_id: str,
    lesson: str,
    *,
    phases: int = 0,
    confidence: float = 0.6,
    outcomes: dict[str, int] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An entry in opencode-swarm's key order with ``phases`` distinct phase confirmations."""
    data: dict[str, Any] = {
        "id": entry_id,
        "tier": "swarm",
        "lesson": lesson,
        "category": fields.pop("category", "process"),
        "tags": fields.pop("tags", []),
        "scope": "global",
        "confidence": confidence,
        "status": fields.pop("status", "candidate"),
        "confirmed_by": [
            {"phase_number": n, "confirmed_at": AT, "project_name": "demo"}
            for n in range(1, phases + 1)
        ],
        "retrieval_outcomes": {
            "applied_count": 0,
            "succeeded_after_count": 0,
            "failed_after_count": 0,
            **(outcomes or {}),
        },
        "schema_version": 1,
        "created_at": AT,
        "updated_at": fields.pop("updated_at", AT),
        "project_name": "demo",
        "auto_generated": True,
    }
    data.update(fields)
    return data


def write_store(workspace: Path, entries: list[dict[str, Any]]) -> Path:
    path = workspace / ".swarm" / "knowledge.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in entries),
        encoding="utf-8",
    )
    return path


def swarm_store(workspace: Path, locks: LocalLocks) -> TierStore:
    return TierStore(TierFiles.swarm(workspace / ".swarm"), locks=locks, project_name="demo")


def lines(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
