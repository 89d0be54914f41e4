"""Helpers shared by benchmarks: a scratch swarm on the local Redis, result files, tables."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from rich.console import Console
from rich.table import Table

from swarmq.coord import keys

BENCH_REDIS_URL = os.environ.get("SWARMQ_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
RESULTS = Path(__file__).resolve().parent / "results"
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
