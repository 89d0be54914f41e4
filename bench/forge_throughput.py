"""Forge throughput on a generated Claude Code transcript, against a bare JSONL parse.

    python bench/forge_throughput.py [--mb 200] [--runs 2]

A realistic session is generated into a temporary directory (never committed): user prompts,
assistant prose (mostly narration, some explanations, a tenth carrying a decision, fix or
lesson drawn from a bounded set), tool calls, multi-kilobyte tool results, thinking blocks,
file-history snapshots. Each measurement runs in a fresh process so its peak RSS is its own:

* baseline: ``for line in file: json.loads(line)``;
* forge: ``forge_transcript`` end to end (detect, stream, classify, dedup, write the pending
  file and the forge index), same file, same run.

Printed: MB/s of both, the ratio (target ≥ 0.5×), the same ratio by CPU time (steadier when
other processes share the cores), and peak RSS above an idle interpreter for
forge on a quarter of the file and on all of it (flat memory: the two should match).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SESSION = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
CWD = "/home/dev/service"
FILES = [
    "api/routes.py",
    "core/pool.py",
    "workers/config.py",
    "db/schema.sql",
    "web/app.ts",
    "Makefile",
    "docs/DESIGN.md",
    "tests/test_pool.py",
    "cli/main.go",
    "deploy/compose.yaml",
]
COMPONENTS = [
    "the broker",
    "the quota gate",
    "the pool scan",
    "the migration",
    "the cache",
    "the scheduler",
    "the API client",
    "the lock",
    "the reader",
    "the index",
]
KNOWLEDGE = [
    "We decided to keep {c} behind a feature flag instead of removing it, because {f} still imports it.",
    "Root cause: {c} read `{f}` before the lock was taken, so two workers wrote line {n} at once.",
    "Fixed by moving the retry into {c} and capping it at {n} attempts in `{f}`.",
    "Lesson learned: always run `make check` after touching {f}; {c} fails silently otherwise.",
    "The contract for {c} is documented in docs/DESIGN.md, section {n}.",
    "Turns out {c} caches the parsed `{f}` for {n} seconds, which is why the edit seemed ignored.",
    "We chose SQLite over Postgres for {c} since it ships with Python and needs no server ({n} ms p99).",
    "Workaround: set PYTHONHASHSEED=0 before running {f}, or {c} orders its output differently.",
]
NARRATION = [
    "Let me look at {f} first.",
    "I'll run the tests again to see if that helped.",
    "Now I will check how {c} is wired.",
    "Sure, I can do that.",
    "Thanks, that works.",
    "Here is the updated version of {f}.",
    "Running the linter on {f} now.",
    "Okay, next step.",
]
EXPLAIN = [
    "The function in {f} walks the directory once and builds a map from id to path; {c} then "
    "reads each entry lazily. The second loop filters by status and keeps the newest {n} rows.",
    "This module wires {c} into the request path: it parses the headers, looks up the tenant and "
    "forwards the call. There are {n} call sites, all in {f}.",
]


def record(kind: str, rng: random.Random, clock: list[float]) -> dict[str, object]:
    clock[0] += rng.uniform(0.2, 9.0)
    stamp = (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock[0])) + f".{rng.randrange(1000):03d}Z"
    )
    base: dict[str, object] = {
        "parentUuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": SESSION,
        "version": "2.0.46",
        "gitBranch": "main",
        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "timestamp": stamp,
    }
    fill = {"f": rng.choice(FILES), "c": rng.choice(COMPONENTS), "n": rng.randrange(2, 40)}
    if kind == "user":
        base.update(
            type="user",
            message={"role": "user", "content": rng.choice(NARRATION + EXPLAIN).format(**fill)},
        )
    elif kind == "snapshot":
        return {
            "type": "file-history-snapshot",
            "messageId": base["uuid"],
            "isSnapshotUpdate": False,
            "snapshot": {
                "messageId": base["uuid"],
                "timestamp": stamp,
                "trackedFileBackups": {
                    f: {
                        "backupFileName": f"{uuid.UUID(int=rng.getrandbits(128)).hex}@v2",
                        "version": 2,
                        "backupTime": stamp,
                    }
                    for f in FILES[:3]
                },
            },
        }
    elif kind == "result":
        body = "\n".join(
            f"{i:5d}\t    value_{i} = compute({i}, cache=cache)  # {rng.random():.6f}"
            for i in range(rng.randrange(40, 160))
        )
        base.update(
            type="user",
            message={
                "role": "user",
                "content": [
                    {
                        "tool_use_id": f"toolu_{rng.getrandbits(48):012x}",
                        "type": "tool_result",
                        "content": body,
                    }
                ],
            },
            toolUseResult={
                "type": "text",
                "file": {"filePath": f"{CWD}/{fill['f']}", "numLines": 160},
            },
        )
    else:
        if kind == "thinking":
            content: list[dict[str, object]] = [
                {
                    "type": "thinking",
                    "thinking": " ".join(rng.choice(EXPLAIN).format(**fill) for _ in range(3)),
                    "signature": "Eq" + uuid.UUID(int=rng.getrandbits(128)).hex * 4,
                }
            ]
        elif kind == "tool":
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{rng.getrandbits(48):012x}",
                    "name": "Read",
                    "input": {"file_path": f"{CWD}/{fill['f']}", "offset": fill["n"], "limit": 200},
                }
            ]
        else:
            pool = (
                KNOWLEDGE if rng.random() < 0.1 else (NARRATION if rng.random() < 0.6 else EXPLAIN)
            )
            text = rng.choice(pool).format(**{**fill, "n": rng.randrange(2, 12)})
            content = [{"type": "text", "text": text}]
        base.update(
            type="assistant",
            requestId=f"req_{rng.getrandbits(64):016x}",
            message={
                "id": f"msg_{rng.getrandbits(64):016x}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": content,
                "stop_reason": None,
                "usage": {
                    "input_tokens": rng.randrange(1, 9),
                    "cache_read_input_tokens": rng.randrange(10**5),
                    "output_tokens": rng.randrange(10, 900),
                    "service_tier": "standard",
                },
            },
        )
    return base


KINDS = ["user", "text", "text", "tool", "result", "text", "thinking", "tool", "result", "snapshot"]


def generate(path: Path, megabytes: int, seed: int = 5) -> int:
    rng = random.Random(seed)
    clock = [1_767_225_600.0]
    target = megabytes * 1024 * 1024
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"type": "summary", "summary": "Service refactor", "leafUuid": SESSION})
            + "\n"
        )
        while written < target:
            line = json.dumps(record(rng.choice(KINDS), rng, clock), separators=(",", ":")) + "\n"
            handle.write(line)
            written += len(line)
    return path.stat().st_size


def peak_kb() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def child(mode: str, file: str) -> None:
    """One measurement in this (fresh) process; prints a JSON line."""
    from swarmq.flywheel.store import AgentsLayout
    from swarmq.forge.extract import forge_transcript
    from swarmq.storage.locking import LocalLocks

    path = Path(file)
    size = path.stat().st_size
    out: dict[str, object] = {"mode": mode, "bytes": size}
    if mode == "idle":
        out.update(seconds=0.0, peak_kb=peak_kb())
    elif mode == "parse":
        started, cpu = time.perf_counter(), time.process_time()
        count = 0
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)
                count += 1
        out.update(
            seconds=time.perf_counter() - started,
            cpu=time.process_time() - cpu,
            lines=count,
            peak_kb=peak_kb(),
        )
    else:
        with tempfile.TemporaryDirectory() as tmp:
            layout = AgentsLayout(Path(tmp) / ".agents")
            started, cpu = time.perf_counter(), time.process_time()
            result = forge_transcript(path, layout, LocalLocks(Path(tmp) / "locks"), force=True)
            out.update(
                seconds=time.perf_counter() - started,
                cpu=time.process_time() - cpu,
                messages=result.messages,
                passages=result.passages,
                candidates=result.candidates,
                new=result.new,
                peak_kb=peak_kb(),
            )
    print(json.dumps(out))


def run_child(mode: str, file: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(file)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    value: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return value


def best_of(modes: list[str], file: Path, runs: int) -> dict[str, dict[str, float]]:
    """Interleave the modes run by run (a busy machine slows both alike); keep each mode's best
    wall-clock run, and its least CPU time over all runs (``best_cpu``: less sensitive to other
    processes sharing the cores)."""
    best: dict[str, dict[str, float]] = {}
    least_cpu: dict[str, float] = {}
    for _ in range(runs):
        for mode in modes:
            value = run_child(mode, file)
            if mode not in best or value["seconds"] < best[mode]["seconds"]:
                best[mode] = value
            least_cpu[mode] = min(least_cpu.get(mode, value["cpu"]), value["cpu"])
    for mode, cpu in least_cpu.items():
        best[mode]["best_cpu"] = cpu
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FILE"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "session.jsonl", Path(tmp) / "quarter.jsonl"
        started = time.perf_counter()
        size = generate(big, args.mb)
        generate(small, max(1, args.mb // 4))
        print(
            f"generated {size / 2**20:.0f} MB Claude Code transcript in {time.perf_counter() - started:.1f} s"
        )
        idle = run_child("idle", small)["peak_kb"]
        best = best_of(["parse", "forge"], big, args.runs)
        parse, forge = best["parse"], best["forge"]
        forge_small = run_child("forge", small)
    mb = size / 2**20
    parse_rate, forge_rate = mb / parse["seconds"], mb / forge["seconds"]
    print(
        f"bare JSONL parse : {parse_rate:7.1f} MB/s  ({parse['lines']:.0f} lines, {parse['seconds']:.2f} s)"
    )
    print(
        f"forge            : {forge_rate:7.1f} MB/s  ({forge['messages']:.0f} messages, {forge['passages']:.0f} "
        f"passages, {forge['candidates']:.0f} candidates, {forge['seconds']:.2f} s)"
    )
    print(f"ratio forge/parse: {forge_rate / parse_rate:.2f}x  (target >= 0.5x)")
    print(
        f"ratio by CPU time: {parse['best_cpu'] / forge['best_cpu']:.2f}x  (least CPU seconds: parse "
        f"{parse['best_cpu']:.2f}, forge {forge['best_cpu']:.2f})"
    )
    print(
        f"peak RSS above idle interpreter: forge {(forge_small['peak_kb'] - idle) / 1024:.1f} MB on "
        f"{forge_small['bytes'] / 2**20:.0f} MB, {(forge['peak_kb'] - idle) / 1024:.1f} MB on {mb:.0f} MB; "
        f"bare parse {(parse['peak_kb'] - idle) / 1024:.1f} MB"
    )


if __name__ == "__main__":
    main()
