"""Tasks the task-overhead benchmark registers (via SWARMQ_EXTRA_TASKS=bench.tasks)."""

from __future__ import annotations

from celery import Task

from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask


@app.task(name="ops.bench_noop", base=Task)
def bench_noop() -> None:
    """A bare Celery task: no quota, no lock, no attempt counting."""


@app.task(name="ops.bench_base")
def bench_base() -> None:
    """The SwarmTask base alone (attempt counter, logging): where the gate's cost is not."""


@app.task(name="ops.bench_gated", bind=True, store_lock="bench:{key}")
def bench_gated(self: SwarmTask, key: int) -> int:
    """The shape of every LLM job with the LLM call removed: a quota slot (reserved and started
    the way :class:`~swarmq.llm.metered.MeteredCompleter` does it) under a store lock."""
    with self.cluster.gate.slot("bench") as slot:
        return slot.start()


@app.task(name="ops.bench_sleep", bind=True)
def bench_sleep(self: SwarmTask, path: str, seconds: float) -> None:
    """Record which node started it and when, then hold the message (unacked) for ``seconds``."""
    import time

    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{self.request.hostname} {time.time():.3f}\n")
    time.sleep(seconds)
