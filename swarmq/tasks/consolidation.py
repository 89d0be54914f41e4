"""Nightly consolidation jobs (``consolidation`` family).

``consolidation.nightly`` (beat-scheduled) enqueues one ``consolidation.scope`` per scope of
the swarm (``swarm``, ``hive``, ``learnings``) with a deterministic task id per scope and UTC
day. ``consolidation.scope`` is single-flight per scope (the declarative lock
``consolidation:<scope>``, besides the store lock the domain code takes), skips a scope whose
done marker for the day is set, reports progress as Celery ``PROGRESS`` state and sets the
marker when it finishes. Re-running it is harmless anyway: consolidation is idempotent.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from swarmq.consolidation.scopes import check_scope
from swarmq.coord import keys
from swarmq.names import CONSOLIDATION_NIGHTLY, CONSOLIDATION_SCOPE
from swarmq.wiring.consolidation import roster_scopes, run_roster_scope
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask

DONE_TTL_SECONDS = 3 * 86_400
"""A done marker outlives its day long enough for late redeliveries to see it."""


def window_of(moment: datetime | None = None) -> str:
    """The consolidation window: the UTC day (beat schedules in UTC)."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d")


def job_name(scope: str) -> str:
    return f"consolidation.{scope}"


def task_id_for(swarm: str, scope: str, window: str) -> str:
    """Deterministic: the same scope and day always get the same task id."""
    return f"consolidation:{swarm}:{scope}:{window}"


@app.task(name=CONSOLIDATION_SCOPE, bind=True, store_lock="consolidation:{scope}")
def consolidate_scope(
    self: SwarmTask,
    scope: str,
    window: str | None = None,
    dry_run: bool = False,
    full: bool = False,
) -> dict[str, Any]:
    """Consolidate one scope once per window; returns the run's summary."""
    check_scope(scope)
    window = window or window_of()
    roster, cluster = self.roster, self.cluster
    marker = keys.done_marker(roster.swarm, job_name(scope), window)
    if not dry_run:
        done = cluster.client.get(marker)
        if done is not None:
            return {
                "scope": scope,
                "window": window,
                "outcome": "already_done",
                "previous": json.loads(done),
            }

    def progress(stage: str, meta: dict[str, Any]) -> None:
        if self.request.id and not self.request.called_directly:
            self.update_state(state="PROGRESS", meta={"stage": stage, "window": window, **meta})

    report = run_roster_scope(
        roster, cluster.locks, scope, dry_run=dry_run, progress=progress, full=full
    )
    summary = {**report.summary(), "window": window, "outcome": "planned" if dry_run else "done"}
    if not dry_run:
        cluster.client.set(marker, json.dumps(summary), ex=DONE_TTL_SECONDS)
    return summary


@app.task(name=CONSOLIDATION_NIGHTLY, bind=True)
def nightly(self: SwarmTask, window: str | None = None) -> dict[str, Any]:
    """Enqueue this window's scopes that are not done yet (idempotent: ids are per day)."""
    roster, cluster = self.roster, self.cluster
    window = window or window_of()
    sent: list[str] = []
    skipped: list[str] = []
    for scope in roster_scopes(roster):
        if cluster.client.exists(keys.done_marker(roster.swarm, job_name(scope), window)):
            skipped.append(scope)
            continue
        consolidate_scope.apply_async(
            kwargs={"scope": scope, "window": window},
            task_id=task_id_for(roster.swarm, scope, window),
        )
        sent.append(scope)
    return {"window": window, "enqueued": sent, "already_done": skipped}
