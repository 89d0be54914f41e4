"""Tasks the task-overhead benchmark registers (via SWARMQ_EXTRA_TASKS=bench.tasks)."""

from __future__ import annotations

from celery import Task

from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask


@app.task(name="ops.bench_noop", base=Task)
def bench_noop() -> None:
    """A bare Celery task: no quota, no lock, no attempt counting."""


@app.task(name="ops.bench_gated", bind=True, store_lock="bench:{key}")
def bench_gated(self: SwarmTask, key: int) -> int:
    """The shape of every LLM job with the LLM call removed: a quota slot under a store lock."""
    with self.quota_slot("bench") as slot:
        return slot.start()
