"""Redis memory over a soak of quota-gated, store-locked tasks: it must stay flat.

    python -m bench.redis_soak [--tasks 100000] [--batch 1000] [--mode ignore|forget]

Runs its own throwaway ``redis-server`` (so ``used_memory`` is this swarm's alone) and one real
worker (prefork, concurrency 2) running ``ops.bench_gated`` (SwarmTask base with its attempt
counter, a store lock over 16 resources — a store has a bounded set of files — and a quota
slot). ``--mode ignore`` sends fire-and-forget (``ignore_result``, as missions, beat entries and
forge do); ``--mode forget`` reads every result and forgets it (as ``swarmq jobs run --wait``);
``--mode keep`` stores results nobody reads (what the pre-issue-14 defaults did for every task).
At each checkpoint the queue is drained and Redis is sampled: ``used_memory``, key count and
keys by kind, and the bytes per 1,000 tasks above the warm-up baseline.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import save, start_worker, table  # noqa: E402
from swarmq.coord import keys  # noqa: E402
from swarmq.coord.cluster import Cluster  # noqa: E402
from swarmq.roster.loader import load_roster  # noqa: E402
from swarmq.workers.app import create_app  # noqa: E402
from swarmq.workers.embedded_redis import server_binary  # noqa: E402
from tests.coord.redis_server import free_port  # noqa: E402

SWARM = "soak"


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            str(server_binary()),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            redis.Redis.from_url(url, socket_connect_timeout=0.2).ping()
            return proc, url
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("soak Redis did not start")


def sample(client: redis.Redis, prefix: str) -> dict[str, Any]:
    kinds: collections.Counter[str] = collections.Counter()
    for raw in client.scan_iter(count=5000):
        key = raw.decode(errors="replace").removeprefix(prefix)
        kinds[key.split(":", 1)[0].split("-task-meta-")[0][:40]] += 1
    info = client.info("memory")
    return {
        "used_memory": int(info["used_memory"]),
        "keys": int(client.dbsize()),
        "by_kind": dict(kinds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument(
        "--mode",
        choices=("ignore", "forget", "keep"),
        default="ignore",
        help="keep: results stored and left (a caller that never reads them)",
    )
    parser.add_argument("--checkpoints", default="10000,50000,100000")
    args = parser.parse_args()
    checkpoints = sorted(
        {int(c) for c in args.checkpoints.split(",") if int(c) <= args.tasks} | {args.tasks}
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, url = start_redis(root)
        config = root / "swarm.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "swarm": SWARM,
                    "workspace": str(root / "project"),
                    "redis_url": url,
                    "paths": {k: str(root / k) for k in ("profiles", "runtime", "shared", "hive")},
                    "quotas": {"bench": {"max_calls_per_day": 1_000_000}},
                    "workers": [
                        {"id": "bench", "role": "bench", "queues": ["missions"], "concurrency": 2}
                    ],
                }
            )
        )
        roster = load_roster(config, env={})
        app = create_app(roster)
        cluster = Cluster.connect(roster.cluster_config())
        client = redis.Redis.from_url(url)
        worker = start_worker(config, "bench", app, extra_tasks=["bench.tasks"])
        sent = 0

        def used() -> int:
            return cluster.gate.status("bench").used

        def run(count: int) -> None:
            nonlocal sent
            target = used() + count
            results = [
                app.send_task(
                    "ops.bench_gated",
                    args=[(sent + i) % 16],
                    queue="worker.bench",
                    ignore_result=args.mode == "ignore",
                )
                for i in range(count)
            ]
            sent += count
            if args.mode == "forget":
                for result in results:
                    result.get(timeout=300)
                    result.forget()
            deadline = time.monotonic() + 300
            while used() < target and time.monotonic() < deadline:
                time.sleep(0.05)
            if used() < target:
                raise RuntimeError(f"worker stalled at {used()} of {target} tasks")

        try:
            run(500)  # warm-up: connections, scripts, quota window, lock and fence keys exist
            baseline = sample(client, keys.prefix(SWARM))
            sent, started, rows, points = 0, time.perf_counter(), [], []
            for checkpoint in checkpoints:
                while sent < checkpoint:
                    run(min(args.batch, checkpoint - sent))
                point = {
                    "tasks": sent,
                    "seconds": time.perf_counter() - started,
                    **sample(client, keys.prefix(SWARM)),
                }
                point["bytes_per_1000_tasks"] = (point["used_memory"] - baseline["used_memory"]) / (
                    sent / 1000
                )
                points.append(point)
                rows.append(
                    [
                        f"{sent:,}",
                        point["used_memory"] / 1e6,
                        point["keys"],
                        point["bytes_per_1000_tasks"],
                        ", ".join(f"{k}={v}" for k, v in sorted(point["by_kind"].items())),
                    ]
                )
                print(
                    f"{sent:,} tasks: {point['used_memory']:,} B, {point['keys']} keys", flush=True
                )
        finally:
            worker.terminate()
            worker.wait(timeout=60)
            cluster.close()
            app.close()
            server.terminate()
            server.wait(timeout=10)
    table(
        f"Redis memory over a soak (mode {args.mode}; baseline {baseline['used_memory'] / 1e6:.2f} MB, "
        f"{baseline['keys']} keys)",
        ["tasks", "used_memory MB", "keys", "bytes/1000 tasks", "keys by kind"],
        rows,
    )
    ratio = points[-1]["used_memory"] / points[0]["used_memory"]
    print(f"memory after {points[-1]['tasks']:,} / after {points[0]['tasks']:,}: {ratio:.2f}x")
    save(
        f"redis_soak_{args.mode}",
        {"baseline": baseline, "points": points, "ratio": ratio, "mode": args.mode},
    )


if __name__ == "__main__":
    main()
