"""Forge and flywheel jobs: ``forge.extract`` per transcript, ``forge.close_loop`` on a schedule.

Thin: arguments are checked, the domain (``swarmq.forge`` / ``.flywheel``) does the work
under its own store locks (the cluster's Redis locks here). Both are safe to redeliver: a
transcript already forged under its key is not read again and every candidate is written once
(content hash); the close loop is idempotent step by step.
"""

from __future__ import annotations

from typing import Any

from swarmq.forge.agentops_queue import close_loop_with_queue
from swarmq.forge.extract import forge_transcript
from swarmq.names import FORGE_CLOSE_LOOP, FORGE_EXTRACT
from swarmq.storage.paths import check_id
from swarmq.wiring.flywheel import (
    forge_completer,
    knowledge_sink,
    layout_for,
    transcript_path,
)
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask

FORMATS = ("claude-code", "codex-rollout", "codex-history", "markdown")


@app.task(name=FORGE_EXTRACT, bind=True)
def extract(
    self: SwarmTask, path: str, key: str | None = None, fmt: str | None = None, force: bool = False
) -> dict[str, Any]:
    """Forge one transcript; ``key`` (a mission id) defaults to the transcript's path."""
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a transcript file path")
    if key is not None:
        check_id(key, "forge key")
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"unknown transcript format {fmt!r}; one of {', '.join(FORMATS)}")
    roster = self.roster
    cluster = self.cluster
    source = transcript_path(roster, path)
    choice = forge_completer(roster, cluster, task_id=self.request.id)
    try:
        result = forge_transcript(
            source,
            layout_for(roster),
            cluster.locks,
            roster.forge,
            key=key,
            fmt=fmt,
            completer=choice.completer,
            force=bool(force),
        )
    finally:
        if choice.completer is not None:
            choice.completer.close()
    out = result.as_dict()
    out["new_candidates"] = out["new_candidates"][:20]
    if not result.llm and roster.forge.llm.enabled:
        out["llm"] = {"status": "unavailable", "reason": choice.reason}
    return out


@app.task(name=FORGE_CLOSE_LOOP, bind=True)
def close_loop(self: SwarmTask) -> dict[str, Any]:
    """Forge AgentOps' session-close queue, then ingest, feedback, promote, mature and measure once."""
    roster = self.roster
    locks = self.cluster.locks
    result = close_loop_with_queue(
        layout_for(roster), locks, roster.forge, roster.flywheel, sink=knowledge_sink(roster, locks)
    )
    return result.as_dict()
