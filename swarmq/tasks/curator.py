"""``curator.enrich``: turn plain-prose knowledge into actionable directives (LLM, quota).

Thin: validates its arguments, builds the enricher from the roster and runs it; the quota,
compare-and-swap merge and fallback policy live in ``swarmq.curation``. Safe to redeliver:
entries already enriched are no longer plain prose, and unchanged lessons are skipped.
"""

from __future__ import annotations

from typing import Any

from swarmq.names import CURATOR_ENRICH
from swarmq.storage.paths import UnsafePathError
from swarmq.wiring.llm import run_enrichment
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask

ENRICH_TASK = CURATOR_ENRICH


def _ids(value: Any) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, str) and 0 < len(v) <= 128 for v in value
    ):
        raise UnsafePathError("entry_ids must be a list of entry id strings (1-128 chars each)")
    return value


@app.task(name=ENRICH_TASK, bind=True)
def enrich(
    self: SwarmTask, entry_ids: list[str] | None = None, max_batches: int | None = None
) -> dict[str, Any]:
    """One enrichment run; returns the report plus the enrichment quota's state."""
    roster = self.roster
    if not roster.curator.enrichment_enabled:
        return {"refused": "disabled: curator.enrichment_enabled is false"}
    if max_batches is not None and (not isinstance(max_batches, int) or max_batches < 1):
        raise ValueError("max_batches must be a positive integer")
    cluster = self.cluster
    return run_enrichment(
        roster,
        cluster.locks,
        cluster,
        task_id=self.request.id,
        entry_ids=_ids(entry_ids),
        max_batches=max_batches,
    )
