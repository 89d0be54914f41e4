"""How fast a task held by a worker that dies comes back, with RabbitMQ as the broker.

    python -m bench.broker_recovery [--rounds 3]   (RabbitMQ at $SWARMQ_BENCH_AMQP_URL, default
                                                     amqp://guest:guest@127.0.0.1:5672//)

Two real worker nodes of one roster worker (``<id>@node-a``, ``<id>@node-b``, prefork,
concurrency 1) consume its direct queue. A task that records its start and sleeps is sent; the
node running it is SIGKILLed with its pool; measured: time until the other node starts it.
With the Redis broker the same message would wait for the visibility window (46 min by
default), which is why missions there are recovered by the reaper instead.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml
from kombu.connection import Connection

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import BENCH_REDIS_URL, save, table  # noqa: E402
from swarmq.roster.loader import load_roster  # noqa: E402
from swarmq.workers.app import create_app  # noqa: E402
from swarmq.workers.processes import CELERY  # noqa: E402

AMQP = os.environ.get("SWARMQ_BENCH_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    worker_id = f"rb{uuid.uuid4().hex[:8]}"
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = root / "swarm.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "swarm": worker_id,
                    "workspace": str(root),
                    "redis_url": BENCH_REDIS_URL,
                    "broker_url": AMQP,
                    "paths": {k: str(root / k) for k in ("profiles", "runtime", "shared", "hive")},
                    "workers": [{"id": worker_id, "role": "bench", "queues": ["missions"]}],
                }
            )
        )
        roster = load_roster(config, env={})
        app = create_app(roster)
        queue = roster.worker(worker_id).direct_queue
        env = {
            **os.environ,
            "SWARMQ_CONFIG": str(config),
            "SWARMQ_WORKER_ID": worker_id,
            "SWARMQ_EXTRA_TASKS": "bench.tasks",
            "PYTHONPATH": str(REPO),
        }
        env.pop("REDIS_URL", None)
        nodes: dict[str, subprocess.Popen[bytes]] = {}

        def start(node: str) -> None:
            argv = [
                *CELERY,
                "-A",
                "swarmq.workers.app",
                "worker",
                "-n",
                f"{worker_id}@{node}",
                "-Q",
                queue,
                "-c",
                "1",
                "-P",
                "prefork",
                "-l",
                "WARNING",
                "--without-mingle",
                "--without-gossip",
            ]
            nodes[node] = subprocess.Popen(
                argv,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            deadline = time.monotonic() + 90
            while not app.control.ping(destination=[f"{worker_id}@{node}"], timeout=0.5):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node {node} did not answer")

        try:
            start("node-a")
            start("node-b")
            for n in range(args.rounds):
                marks = root / f"round-{n}.txt"
                app.send_task(
                    "ops.bench_sleep",
                    args=[str(marks), 120],
                    queue=queue,
                    routing_key=queue,
                    ignore_result=True,
                )
                deadline = time.monotonic() + 60
                while not lines(marks) and time.monotonic() < deadline:
                    time.sleep(0.02)
                victim = lines(marks)[0].split()[0].split("@", 1)[1]
                os.killpg(nodes[victim].pid, signal.SIGKILL)
                killed = time.time()
                nodes[victim].wait(timeout=30)
                while len(lines(marks)) < 2 and time.time() - killed < 300:
                    time.sleep(0.02)
                again = lines(marks)[1].split()
                times.append(float(again[1]) - killed)
                print(
                    f"round {n}: killed {victim}; restarted on {again[0]} after {times[-1]:.2f}s",
                    flush=True,
                )
                for proc in nodes.values():  # drop the task: kill both, purge, start both
                    if proc.poll() is None:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait(timeout=30)
                time.sleep(0.5)
                with Connection(AMQP) as conn:
                    conn.channel().queue_purge(queue)
                start("node-a")
                start("node-b")
        finally:
            for proc in nodes.values():
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
            app.close()
            with Connection(AMQP) as conn:
                channel = conn.channel()
                for name in (queue,):
                    try:
                        channel.queue_delete(name)
                    except Exception as exc:
                        print(f"could not delete queue {name}: {exc}")
    table(
        "RabbitMQ: dead worker's task restarted elsewhere (ms)",
        ["median", "max"],
        [[statistics.median(times) * 1000, max(times) * 1000]],
    )
    save("broker_recovery", {"rounds": times})


if __name__ == "__main__":
    main()
