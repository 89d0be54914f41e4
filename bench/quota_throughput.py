"""Quota gate: reserve→start cycles per second, against a raw EVALSHA round trip.

Run: python -m bench.quota_throughput [--cycles N] [--procs 8]

A cycle is two round trips (reserve, start), each one EVALSHA of a real script; the baseline is
EVALSHA of ``return 1`` on the same server, same client library, same run. The ratio that the
target (≥ 0.8×) applies to compares like with like: round trips per second of the gate against
round trips per second of the trivial script. The figure with the on-disk mirror (every start
rewrites opencode-swarm's quota file) is reported beside it.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from bench.common import BENCH_REDIS_URL, save, scratch_swarm, table
from swarmq.coord.quota import QuotaGate
from swarmq.roster.schema import QuotaConfig

BIG = QuotaConfig(max_calls_per_day=1_000_000)


def raw_evalsha(client: redis.Redis, n: int) -> float:
    sha = client.script_load("return 1")
    started = time.perf_counter()
    for _ in range(n):
        client.evalsha(sha, 0)
    return n / (time.perf_counter() - started)


def gate_cycles(client: redis.Redis, swarm: str, n: int, mirror: Path | None) -> float:
    gate = QuotaGate(client, swarm, {"bench": BIG}, mirror_dir=mirror)
    gate.start(gate.reserve("bench"))  # warm the script cache and the window
    started = time.perf_counter()
    for _ in range(n):
        gate.start(gate.reserve("bench"))
    return n / (time.perf_counter() - started)


def _proc(kind: str, swarm: str, n: int, mirror: str | None, go: Any, out: Any) -> None:
    client = redis.Redis.from_url(BENCH_REDIS_URL)
    if kind == "raw":
        sha = client.script_load("return 1")
        go.wait()
        started = time.perf_counter()
        for _ in range(n):
            client.evalsha(sha, 0)
    else:
        gate = QuotaGate(client, swarm, {"bench": BIG}, mirror_dir=Path(mirror) if mirror else None)
        gate.start(gate.reserve("bench"))
        go.wait()
        started = time.perf_counter()
        for _ in range(n):
            gate.start(gate.reserve("bench"))
    out.put((started, time.perf_counter()))


def parallel(kind: str, swarm: str, n: int, procs: int, mirror: Path | None = None) -> float:
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    workers = [
        ctx.Process(target=_proc, args=(kind, swarm, n, str(mirror) if mirror else None, go, out))
        for _ in range(procs)
    ]
    for w in workers:
        w.start()
    time.sleep(0.5)
    go.set()
    spans = [out.get() for _ in workers]
    for w in workers:
        w.join()
    wall = max(end for _, end in spans) - min(start for start, _ in spans)
    return n * procs / wall


def interleaved(
    rounds: int, baseline: Callable[[], float], candidate: Callable[[], float]
) -> tuple[float, float]:
    """Alternate baseline and candidate runs so machine load hits both alike; medians of each."""
    base, cand = [], []
    for _ in range(rounds):
        base.append(baseline())
        cand.append(candidate())
    return statistics.median(base), statistics.median(cand)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, default=5_000, help="cycles per round and client")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--procs", type=int, default=8)
    args = parser.parse_args()
    client = redis.Redis.from_url(BENCH_REDIS_URL)
    n, procs = args.cycles, args.procs
    rows: list[list[Any]] = []
    results: dict[str, Any] = {"cycles_per_round": n, "rounds": args.rounds, "procs": procs}
    with scratch_swarm() as swarm, tempfile.TemporaryDirectory() as tmp:
        mirror = Path(tmp)
        raw1, gate1 = interleaved(
            args.rounds,
            lambda: raw_evalsha(client, 2 * n),
            lambda: gate_cycles(client, swarm, n, None),
        )
        _, mirrored1 = interleaved(1, lambda: 0.0, lambda: gate_cycles(client, swarm, n, mirror))
        rawn, gaten = interleaved(
            args.rounds,
            lambda: parallel("raw", swarm, 2 * n // procs, procs),
            lambda: parallel("gate", swarm, n // procs, procs),
        )
        _, mirroredn = interleaved(
            1, lambda: 0.0, lambda: parallel("gate", swarm, n // procs, procs, mirror)
        )
    for label, raw, gate, mirrored in (
        ("1 client", raw1, gate1, mirrored1),
        (f"{procs} processes", rawn, gaten, mirroredn),
    ):
        ratio = gate * 2 / raw
        rows.append(
            [label, raw, gate, gate * 2, f"{ratio:.2f}x", mirrored, f"{mirrored * 2 / raw:.2f}x"]
        )
        results[label] = {
            "raw_evalsha_per_s": raw,
            "cycles_per_s": gate,
            "round_trips_per_s": gate * 2,
            "ratio_per_round_trip": ratio,
            "cycles_per_s_with_mirror": mirrored,
            "ratio_with_mirror": mirrored * 2 / raw,
        }
    table(
        "quota gate: reserve→start (target ≥ 0.80x per round trip; medians of interleaved rounds)",
        [
            "clients",
            "raw EVALSHA/s",
            "cycles/s",
            "gate round trips/s",
            "ratio",
            "cycles/s +mirror",
            "ratio +mirror",
        ],
        rows,
    )
    print(f"results: {save('quota_throughput', results)}")


if __name__ == "__main__":
    main()
