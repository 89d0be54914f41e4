"""What recording a hook or MCP call's latency adds to the call, against the bare timing.

    python bench/call_latency.py [--calls 200000]

Each hook answer and MCP tool call pays two ``perf_counter`` reads and one
:meth:`LatencyRecorder.observe` (a lock, a bisect, an add); the file is written by a daemon
thread at most once a second. Measured: observe's cost per call (the bar: ≤ 0.1 ms), against the
baseline of the two clock reads alone, and one flush of the file (off the call's path).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import save, table  # noqa: E402
from swarmq.hooks.server import OPS  # noqa: E402
from swarmq.storage.call_latency import LatencyRecorder  # noqa: E402


def per_call_us(action: object, calls: int) -> float:
    assert callable(action)
    started = time.perf_counter()
    for _ in range(calls):
        action()
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        recorder = LatencyRecorder(Path(tmp), "hook", OPS)

        def timed_observe() -> None:
            started = time.perf_counter()
            recorder.observe("prompt", time.perf_counter() - started)

        def bare_timing() -> None:
            started = time.perf_counter()
            _ = time.perf_counter() - started

        rounds = [
            (per_call_us(timed_observe, args.calls), per_call_us(bare_timing, args.calls))
            for _ in range(5)
        ]
        flushes = []
        for _ in range(50):
            started = time.perf_counter()
            recorder.flush()
            flushes.append((time.perf_counter() - started) * 1000)
        recorder.close()
    observe = statistics.median(r[0] for r in rounds)
    bare = statistics.median(r[1] for r in rounds)
    result = {
        "calls": args.calls,
        "observe_us": observe,
        "bare_timing_us": bare,
        "added_us": observe - bare,
        "flush_ms_p50": statistics.median(flushes),
        "flush_ms_max": max(flushes),
    }
    table(
        "recording one call's latency (µs per call, median of 5 rounds)",
        ["what", "µs"],
        [["timing + observe", observe], ["baseline: timing alone", bare]],
    )
    print(
        f"observe adds {observe - bare:.2f} µs per call ({observe / bare:.1f}× the bare timing); "
        f"bar ≤ 100 µs: {'met' if observe - bare <= 100 else 'NOT met'}; one flush "
        f"(atomic rewrite, off the call's path) p50 {result['flush_ms_p50']:.2f} ms"
    )
    save("call_latency", result)


if __name__ == "__main__":
    main()
