"""Quota gate: reserve→start cycles per second, against a raw EVALSHA round trip.

Run: python -m bench.quota_throughput [--cycles N] [--procs 8]

A cycle is two round trips (reserve, start), each one EVALSHA of a real script; the baseline is
EVALSHA of ``return 1`` on the same server, same client library, same run. The ratio that the
target (≥ 0.8×) applies to compares like with like: round trips per second of the gate against
round trips per second of the trivial script. The figure with the on-disk mirror (every start
appends to the start journal before it counts, and opencode-swarm's quota file is rewritten
behind the gate) is reported beside it, and so is the cost of one journal append alone.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import redis

from bench.common import BENCH_REDIS_URL, save, scratch_swarm, table
from swarmq.coord.connection import lua_source
from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_file import StartJournal

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


def journal_append_us(n: int = 20_000) -> float:
    """Microseconds per start-journal append (what durability adds to every ``start``)."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = StartJournal(Path(tmp))
        journal.started("bench", "2026-01-01", "0" * 24)
        started = time.perf_counter()
        for i in range(n):
            journal.started("bench", "2026-01-01", f"{i:024x}")
        return (time.perf_counter() - started) / n * 1e6


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
    spans: list[tuple[float, float]] = [out.get() for _ in workers]
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


def c_client_floor(client: redis.Redis, swarm: str, n: int = 20_000) -> dict[str, float] | None:
    """The same comparison with redis-benchmark (a C client): what the scripts cost the server
    and the wire, without Python's per-argument client cost. ``None`` without the binary."""
    binary = shutil.which("redis-benchmark")
    if binary is None:
        return None
    parts = urlsplit(BENCH_REDIS_URL)
    base = [binary, "-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 6379),
            "--dbnum", parts.path.strip("/") or "0", "-c", "1", "-n", str(n), "-q", "--csv"]  # fmt: skip
    gate = QuotaGate(client, swarm, {"floor": BIG})
    call = gate.reserve_call("floor")
    used_key, held_key = (k.decode() for k in call.keys)
    raw_sha = client.script_load("return 1")
    reserve = [*base, "-r", "100000000", "EVALSHA", gate._reserve.sha, "2", used_key, held_key,
               call.args[0].decode()[:-2] + "0", "tok__rand_int__"]  # fmt: skip
    release = [
        *base,
        "-r",
        "100000000",
        "EVALSHA",
        gate._release.sha,
        "1",
        held_key,
        "tok__rand_int__",
    ]

    def rps(argv: list[str]) -> float:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True).stdout
        return float(out.strip().splitlines()[-1].split(",")[1].strip('"'))

    client.script_load(lua_source("quota_reserve"))
    client.script_load(lua_source("quota_release"))
    raw = rps([*base, "EVALSHA", raw_sha, "0"])
    res, rel = rps(reserve), rps(release)
    return {"raw_evalsha_per_s": raw, "reserve_per_s": res, "release_per_s": rel,
            "reserve_ratio": res / raw, "release_ratio": rel / raw}  # fmt: skip


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
        floor = c_client_floor(client, swarm)
    if floor is not None:
        results["c_client_floor"] = floor
    results["journal_append_us"] = journal_append_us()
    print(f"start journal: {results['journal_append_us']:.1f} µs per append")
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
    if floor is not None:
        table(
            "the same scripts from a C client (redis-benchmark): server and wire cost only",
            ["script", "per second", "ratio to raw EVALSHA"],
            [
                ["raw EVALSHA (return 1)", floor["raw_evalsha_per_s"], "1.00x"],
                ["quota_reserve", floor["reserve_per_s"], f"{floor['reserve_ratio']:.2f}x"],
                ["quota_release", floor["release_per_s"], f"{floor['release_ratio']:.2f}x"],
            ],
        )
    print(f"results: {save('quota_throughput', results)}")


if __name__ == "__main__":
    main()
