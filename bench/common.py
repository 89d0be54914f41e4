"""Helpers shared by benchmarks: a scratch swarm on the local Redis, result files, tables."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from celery import Celery
from rich.console import Console
from rich.table import Table

from swarmq.coord import keys
from swarmq.roster.loader import load_roster
from swarmq.workers.processes import CELERY, celery_hostname, celery_worker_args

BENCH_REDIS_URL = os.environ.get("SWARMQ_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
console = Console()


@contextmanager
def scratch_swarm() -> Iterator[str]:
    """A unique swarm name whose keys are all deleted afterwards."""
    name = f"bench{uuid.uuid4().hex[:8]}"
    try:
        yield name
    finally:
        client = redis.Redis.from_url(BENCH_REDIS_URL)
        batch = list(client.scan_iter(match=f"{keys.prefix(name)}*", count=1000))
        if batch:
            client.delete(*batch)
        client.close()


def scratch_dir(prefix: str, parent: Path | None) -> Path:
    """A fresh directory for one run, under ``parent`` or the system's temp dir. A ``--dir``
    that does not exist yet is where the caller wants the run, not a mistake: it is created
    (``tempfile.mkdtemp`` alone raises FileNotFoundError on it)."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def save(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def table(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    out = Table(title=title)
    for column in columns:
        out.add_column(column)
    for row in rows:
        out.add_row(*(f"{v:,.1f}" if isinstance(v, float) else str(v) for v in row))
    console.print(out)


def start_worker(
    config: Path,
    worker_id: str,
    app: Celery,
    *,
    extra_tasks: Sequence[str] = (),
    timeout: float = 60.0,
) -> subprocess.Popen[bytes]:
    """A real worker for a roster entry, as `swarmq up` runs it, quiet; returns once it answers."""
    roster = load_roster(config, env={})
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(
        {"SWARMQ_CONFIG": str(config), "SWARMQ_WORKER_ID": worker_id, "PYTHONPATH": str(REPO)}
    )
    if extra_tasks:
        env["SWARMQ_EXTRA_TASKS"] = ",".join(extra_tasks)
    argv = [*CELERY, *celery_worker_args(roster.worker(worker_id)), "-l", "WARNING",
            "--without-mingle", "--without-gossip"]  # fmt: skip
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    host = celery_hostname(worker_id)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if app.control.ping(destination=[host], timeout=0.5):
            return proc
    proc.kill()
    raise RuntimeError(f"benchmark worker {worker_id} did not answer within {timeout:.0f}s")


class StandIn:
    """The configured model's name and dimension, seeded random unit vectors (``--fill
    synthetic``)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: Any) -> Any:
        import numpy as np

        from swarmq.similarity.embedding import content_key, normalise_rows

        rows = [
            np.random.default_rng(list(content_key(t))).standard_normal(self.dim) for t in texts
        ]
        return normalise_rows(np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim))
