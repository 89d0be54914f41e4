"""Tasks only the test suite registers (via SWARMQ_EXTRA_TASKS)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from swarmq.storage.atomic import append_jsonl
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask, worker_id


@app.task(name="ops.suicide")
def suicide() -> None:
    """Die like an OOM kill would: no exception, no ack."""
    os.kill(os.getpid(), signal.SIGKILL)


@app.task(name="maturity.echo")
def echo(value: Any) -> dict[str, Any]:
    return {"worker_id": worker_id(), "value": value}


@app.task(name="ops.gated_append", bind=True, store_lock="file:{path}")
def gated_append(self: SwarmTask, path: str, value: int) -> int:
    """Quota-gated and store-locked: the shape of every LLM job (declarative lock, and a slot
    from the cluster's quota gate, as MeteredCompleter takes it)."""
    assert self.lease is not None
    with self.cluster.gate.slot("enrichment") as slot:
        used = slot.start()
        append_jsonl(Path(path), [{"value": value, "worker": worker_id()}], lease=self.lease)
    return used


@app.task(name="ops.adhoc_append", bind=True)
def adhoc_append(self: SwarmTask, path: str, value: int) -> int:
    """The same through the ad hoc helpers a task uses when the lock depends on its work."""
    with (
        self.hold_store_lock(f"file:{path}") as lease,
        self.cluster.gate.slot("enrichment") as slot,
    ):
        used = slot.start()
        append_jsonl(Path(path), [{"value": value, "worker": worker_id()}], lease=lease)
    return used
