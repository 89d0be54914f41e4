"""Dispatch overhead: mission submit → agent process started, vs a bare Celery task round trip.

    python bench/missions_dispatch.py [--missions 30]   (needs Redis: $SWARMQ_BENCH_REDIS_URL,
                                                          default redis://127.0.0.1:6379/15)

One real worker (prefork, concurrency 1) runs both: `ops.ping` sent to its direct queue and
awaited (the baseline), and missions whose agent is `date +%s.%N` (so "started" is the agent's
own first instant, read back from the transcript). The two alternate, one at a time, so both see
the same machine load; before each pair an untimed ping through the same queue waits until the
worker has finished the previous mission (its settle, archive and ack), so a dispatch is
measured on an idle worker, like the round trip it is compared with.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
import yaml
from celery import Celery

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import start_worker  # noqa: E402
from swarmq.client import MissionClient  # noqa: E402
from swarmq.coord import keys  # noqa: E402
from swarmq.coord.cluster import Cluster  # noqa: E402
from swarmq.profiles.layout import ProfileLayout  # noqa: E402
from swarmq.roster.loader import load_roster  # noqa: E402
from swarmq.workers.app import create_app  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ping(app: Celery) -> None:
    app.send_task("ops.ping", queue="worker.b1", routing_key="worker.b1").get(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--missions", type=int, default=30)
    args = parser.parse_args()
    url = os.environ.get("SWARMQ_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")
    swarm = f"bench{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = root / "swarm.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "swarm": swarm,
                    "workspace": str(root),
                    "redis_url": url,
                    "paths": {k: str(root / k) for k in ("profiles", "runtime", "shared", "hive")},
                    "missions": {"echo_output": False, "recall_budget_chars": 0},
                    "workers": [
                        {
                            "id": "b1",
                            "role": "builder",
                            "queues": ["missions"],
                            "agent": {"command": ["date", "+%s.%N"], "timeout_seconds": 30},
                        }
                    ],
                }
            )
        )
        roster = load_roster(config, env={})
        app = create_app(roster)
        cluster = Cluster.connect(roster.cluster_config())
        worker = start_worker(config, "b1", app)
        try:
            client = MissionClient(roster, celery=app, locks=cluster.locks)
            layout = ProfileLayout(roster.profiles_dir, roster.shared_dir, "b1")
            baseline: list[float] = []
            dispatch: list[float] = []
            for n in range(args.missions):
                ping(app)  # the worker is idle: the previous mission's task has ended
                started = time.perf_counter()
                ping(app)
                baseline.append(time.perf_counter() - started)
                submitted = time.time()
                mission = client.submit(f"bench mission {n}", worker="b1")
                assert mission.current is not None
                transcript = layout.transcript(mission.id, mission.current.id)
                while client.get(mission.id).state.value in ("planning", "executing"):
                    time.sleep(0.005)
                stamp = next(
                    line for line in transcript.read_text().splitlines() if line[:1].isdigit()
                )
                dispatch.append(float(stamp) - submitted)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            client_redis = redis.Redis.from_url(url)
            batch = list(client_redis.scan_iter(match=f"{keys.prefix(swarm)}*", count=1000))
            if batch:
                client_redis.delete(*batch)
            app.close()
            cluster.close()
    b50, d50 = statistics.median(baseline) * 1000, statistics.median(dispatch) * 1000
    print(
        f"bare Celery round trip (ops.ping on worker.b1): p50 {b50:.1f} ms, p99 {pct(baseline, 0.99) * 1000:.1f} ms"
    )
    print(
        f"mission submit -> agent started: p50 {d50:.1f} ms, p99 {pct(dispatch, 0.99) * 1000:.1f} ms"
    )
    print(f"ratio dispatch/round trip p50: {d50 / b50:.1f}x ({args.missions} each)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
