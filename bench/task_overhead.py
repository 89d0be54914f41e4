"""End-to-end throughput of a quota-gated, store-locked no-op task against a bare Celery no-op
task, on the same worker, in the same run (target ≥ 0.75×).

Run: python -m bench.task_overhead [--tasks N] [--rounds R] [--concurrency C]

Both kinds go through the same broker, worker and result backend; the gated one adds the
SwarmTask base (attempt counter), a Redis store lock with its lease and fencing token, and a
quota reserve→start with the on-disk mirror.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from celery import Celery

from bench.common import BENCH_REDIS_URL, save, scratch_swarm, start_worker, table
from swarmq.roster.loader import load_roster
from swarmq.workers.app import create_app

REPO = Path(__file__).resolve().parent.parent


def write_roster(directory: Path, swarm: str, concurrency: int) -> Path:
    data = {
        "swarm": swarm,
        "workspace": str(directory / "project"),
        "paths": {k: str(directory / k) for k in ("profiles", "runtime", "shared", "hive")},
        "redis_url": BENCH_REDIS_URL,
        "quotas": {"bench": {"max_calls_per_day": 1_000_000}},
        "workers": [
            {"id": "bench", "role": "bench", "queues": ["missions"], "concurrency": concurrency}
        ],
    }
    path = directory / "swarm.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def throughput(app: Celery, name: str, n: int, gated: bool) -> float:
    started = time.perf_counter()
    results = [
        app.send_task(name, args=[i] if gated else [], queue="worker.bench") for i in range(n)
    ]
    for result in results:
        result.get(timeout=120)
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=1000, help="tasks per round and kind")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    with scratch_swarm() as swarm, tempfile.TemporaryDirectory() as tmp:
        config = write_roster(Path(tmp), swarm, args.concurrency)
        app = create_app(load_roster(config, env={}))
        worker = start_worker(config, "bench", app, extra_tasks=["bench.tasks"])
        try:
            throughput(app, "ops.bench_noop", 100, False)  # warm both paths
            throughput(app, "ops.bench_gated", 100, True)
            bare, base, gated = [], [], []
            for _ in range(args.rounds):
                bare.append(throughput(app, "ops.bench_noop", args.tasks, False))
                base.append(throughput(app, "ops.bench_base", args.tasks, False))
                gated.append(throughput(app, "ops.bench_gated", args.tasks, True))
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            app.close()
    b, m, g = statistics.median(bare), statistics.median(base), statistics.median(gated)
    results: dict[str, Any] = {
        "tasks_per_round": args.tasks,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "bare_tasks_per_s": b,
        "base_tasks_per_s": m,
        "gated_tasks_per_s": g,
        "ratio": g / b,
        "bare_rounds": bare,
        "base_rounds": base,
        "gated_rounds": gated,
    }
    table(
        "quota-gated, store-locked no-op vs bare Celery no-op (target ≥ 0.75x; medians of interleaved rounds)",
        ["task", "tasks/s", "ratio"],
        [
            ["bare Celery no-op", b, "1.00x"],
            ["SwarmTask no-op (attempt counter)", m, f"{m / b:.2f}x"],
            ["quota-gated, store-locked no-op", g, f"{g / b:.2f}x"],
        ],
    )
    print(f"results: {save('task_overhead', results)}")


if __name__ == "__main__":
    main()
