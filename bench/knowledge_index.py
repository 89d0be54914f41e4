"""Issue 28's persistent index: ``swarmq knowledge inject --preview`` and ``knowledge search``
from fresh processes (``swarm.yaml`` present) through the per-store SQLite index, against the
whole-store path (``knowledge.persistent_index: false``, the stores loaded on every call) on the
same stores in the same run; the index's build time and size (vector files included), the first
read after a recorded injection rewrote the store (the line-by-line sync), and each child's peak
RSS (``VmHWM`` of ``/proc/self/status``, read by the child at exit).

``--retrieval hybrid`` (the default setting, and this bench's) reads the entries' vectors from the
index's vector file; ``lexical`` is the setting the index first served. The whole-store path of
hybrid reads its vectors from the ``embeddings.npz`` sidecar the first whole-store call writes.

    python -m bench.knowledge_index [--entries 10000] [--runs 15] [--baseline-runs 5]
                                    [--retrieval hybrid|lexical]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.cli_startup import child_env
from bench.common import BENCH_REDIS_URL, REPO, save, table
from bench.knowledge_inject import write_tier
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.model import Tier
from swarmq.names import JOB_FAMILIES

WRAPPER = """
import atexit, runpy, sys
OUT = sys.argv[1]
def peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(OUT, "w") as out:
        out.write(kb)
atexit.register(peak)
sys.argv = ["swarmq", *sys.argv[2:]]
runpy.run_module("swarmq.cli", run_name="__main__")
"""


LEAN = """
import sys, time
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.roster.loader import load_roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.knowledge import knowledge_store
roster = load_roster(sys.argv[1])
knowledge = knowledge_store(roster, LocalLocks(roster.runtime_dir / "bench-locks"))
started, cpu0 = time.perf_counter(), time.process_time()
knowledge.embedder  # the model's load (hybrid), part of the call, timed apart too
loaded, cpu1 = time.perf_counter(), time.process_time()
search(knowledge, QueryContext(text=sys.argv[2]), limit=10)
done, cpu2 = time.perf_counter(), time.process_time()
with open("/proc/self/status") as status:
    kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
ms = [1000 * x for x in (done - started, loaded - started, cpu2 - cpu0, cpu1 - cpu0)]
print(*ms, int(kb) / 1024)
"""


def roster(root: Path, name: str, persistent: bool, retrieval: str) -> Path:
    path = root / name
    path.write_text(yaml.safe_dump({
        "swarm": "benchindex", "workspace": str(root / "project"),
        "paths": {"profiles": str(root / "profiles"), "runtime": str(root / "runtime"),
                  "shared": str(root / "shared"), "hive": str(root / "hive")},
        "redis_url": BENCH_REDIS_URL,
        "workers": [{"id": "w1", "role": "builder", "queues": list(JOB_FAMILIES)}],
        "knowledge": {"swarm_max_entries": None, "hive_max_entries": None,
                      "retrieval": retrieval, "persistent_index": persistent},
    }))  # fmt: skip
    return path


CPU: list[float] = []
"""CPU ms (user + system) of each child run, in run order: steadier than wall time when the
machine is shared."""


def run(root: Path, env: dict[str, str], args: list[str]) -> tuple[float, float]:
    """Wall ms and peak RSS (MB) of one fresh ``swarmq`` process; a failure is an error."""
    wrapper = root / "peak.py"
    peak = root / "peak.kb"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(wrapper), str(peak), *args],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
    )  # fmt: skip
    elapsed = 1000 * (time.perf_counter() - started)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
    if done.returncode != 0:
        raise SystemExit(f"swarmq {' '.join(args)} failed: {done.stderr.decode()[-2000:]}")
    return elapsed, int(peak.read_text()) / 1024


def queries(count: int) -> list[str]:
    generator = LessonGenerator(seed=9)
    rng = random.Random(5)
    lessons = generator.corpus(400).lessons
    return [" ".join(rng.sample(lessons, 2)) for _ in range(count)]


def sidecars(root: Path) -> list[Path]:
    return [
        *root.glob("project/.swarm/*.index.sqlite*"),
        *root.glob("hive/*.index.sqlite*"),
    ]


def measure(
    root: Path, entries: int, runs: int, baseline_runs: int, retrieval: str, rewrite: bool = True
) -> dict[str, Any]:
    generator = LessonGenerator(seed=9)
    swarm_file = root / "project" / ".swarm" / "knowledge.jsonl"
    if not swarm_file.exists():  # a kept --root is generated once (1M takes minutes)
        started = time.perf_counter()
        write_tier(swarm_file, generator.corpus(entries).lessons, Tier.SWARM, 1)
        write_tier(
            root / "hive" / "shared-learnings.jsonl",
            generator.corpus(max(1, entries // 10)).lessons,
            Tier.HIVE,
            2,
        )
        print(f"stores written in {time.perf_counter() - started:.0f} s", flush=True)
    (root / "peak.py").write_text(WRAPPER)
    (root / "home").mkdir(exist_ok=True)
    env = child_env(root, REPO, True)
    indexed = roster(root, "swarm.yaml", True, retrieval)
    whole = roster(root, "swarm-whole.yaml", False, retrieval)
    texts = queries(max(runs, baseline_runs) + 1)
    commands = {
        "inject --preview": lambda c, t: ["-c", str(c), "knowledge", "inject", "--preview", t],
        "search": lambda c, t: ["-c", str(c), "knowledge", "search", "--json", t],
    }
    if baseline_runs:
        run(root, env, commands["search"](whole, texts[0]))  # bytecode compiled once
    built = bool(sidecars(root))  # a kept --root's index from an earlier run: no build measured
    build_ms, build_rss = run(root, env, commands["search"](indexed, texts[0]))
    build_cpu = CPU[-1]
    print(f"first indexed call ({'index kept' if built else 'build'}): {build_ms:,.0f} ms, "
          f"{build_cpu:,.0f} ms CPU, {build_rss:.0f} MB", flush=True)  # fmt: skip
    size = sum(p.stat().st_size for p in sidecars(root))
    rows: dict[str, dict[str, float]] = {}
    for label, argv in commands.items():
        for path_label, config, count in (
            ("index", indexed, runs),
            ("whole store", whole, baseline_runs),
        ):
            if not count:
                continue
            times, peaks, cpu = [], [], []
            for text in texts[1 : count + 1]:
                elapsed, peak = run(root, env, argv(config, text))
                times.append(elapsed)
                peaks.append(peak)
                cpu.append(CPU[-1])
            rows[f"{label} ({path_label})"] = {
                "p50_ms": statistics.median(times),
                "cpu_p50_ms": statistics.median(cpu),
                "max_ms": max(times),
                "peak_rss_mb": max(peaks),
                "runs": len(times),
            }
    # The search alone in a fresh process (imports excluded): index open + check, query, reads.
    (root / "lean.py").write_text(LEAN)
    for path_label, config, count in (
        ("index", indexed, runs),
        ("whole store", whole, baseline_runs),
    ):
        if not count:
            continue
        alone, model, lean_peaks, alone_cpu, model_cpu = [], [], [], [], []
        for text in texts[1 : count + 1]:
            done = subprocess.run(
                [sys.executable, str(root / "lean.py"), str(config), text],
                cwd=root, env=env, capture_output=True, check=True, text=True,
            )  # fmt: skip
            total, load, call_cpu, load_cpu, peak = (float(x) for x in done.stdout.split()[-5:])
            alone.append(total)
            model.append(load)
            alone_cpu.append(call_cpu)
            model_cpu.append(load_cpu)
            lean_peaks.append(peak)
        rows[f"search call alone ({path_label})"] = {
            "p50_ms": statistics.median(alone), "cpu_p50_ms": statistics.median(alone_cpu),
            "max_ms": max(alone),
            "peak_rss_mb": max(lean_peaks),
            "runs": len(alone),
        }  # fmt: skip
        rows[f"  search without the model load ({path_label})"] = {
            "p50_ms": statistics.median(a - m for a, m in zip(alone, model, strict=True)),
            "cpu_p50_ms": statistics.median(
                a - m for a, m in zip(alone_cpu, model_cpu, strict=True)
            ),
            "max_ms": max(a - m for a, m in zip(alone, model, strict=True)),
            "peak_rss_mb": 0.0, "runs": len(alone),
        }  # fmt: skip
        rows[f"  of which model load ({path_label})"] = {
            "p50_ms": statistics.median(model), "cpu_p50_ms": statistics.median(model_cpu),
            "max_ms": max(model),
            "peak_rss_mb": 0.0, "runs": len(model),
        }  # fmt: skip
    # A recorded injection rewrites the store (shown counters): the next reader syncs the index.
    synced = []
    for text in texts[1:4] if rewrite else []:
        run(root, env, ["-c", str(indexed), "knowledge", "inject", text])
        synced.append(run(root, env, commands["search"](indexed, text))[0])
    result: dict[str, Any] = {
        "retrieval": retrieval,
        "entries": entries,
        "hive_entries": max(1, entries // 10),
        "store_mb": swarm_file.stat().st_size / 2**20,
        "index_prebuilt": built,
        "index_build_ms": build_ms,
        "index_build_cpu_ms": build_cpu,
        "index_build_peak_rss_mb": build_rss,
        "index_mb": size / 2**20,
        "search_after_rewrite_p50_ms": statistics.median(synced) if synced else None,
        "paths": rows,
    }
    for label in [*commands, "search call alone"]:
        if f"{label} (whole store)" in rows:  # --baseline-runs 0 (1M): no whole-store rows
            result[f"{label} speedup"] = (
                rows[f"{label} (whole store)"]["p50_ms"] / rows[f"{label} (index)"]["p50_ms"]
            )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline-runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--retrieval", choices=["hybrid", "lexical"], default="hybrid")
    parser.add_argument(
        "--root", type=Path, default=None,
        help="a kept directory: the stores are written once and reused, never deleted",
    )  # fmt: skip
    parser.add_argument(
        "--skip-rewrite", action="store_true",
        help="no recorded injection (at 1M each one loads the whole store to rewrite it)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.root is not None:
        args.root.mkdir(parents=True, exist_ok=True)
        result = measure(
            args.root, args.entries, args.runs, args.baseline_runs, args.retrieval,
            not args.skip_rewrite,
        )  # fmt: skip
    else:
        root = Path(tempfile.mkdtemp(prefix="knowledge-index-", dir=args.dir))
        try:
            result = measure(root, args.entries, args.runs, args.baseline_runs, args.retrieval)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    table(
        f"{args.retrieval} retrieval, fresh processes over {args.entries:,} swarm + "
        f"{result['hive_entries']:,} hive entries "
        f"(store {result['store_mb']:.1f} MB, index {result['index_mb']:.1f} MB, "
        f"built in {result['index_build_ms']:,.0f} ms)",
        ["command (path)", "p50 ms", "CPU p50 ms", "max ms", "peak RSS MB", "runs"],
        [
            [
                label,
                row["p50_ms"],
                row["cpu_p50_ms"],
                row["max_ms"],
                row["peak_rss_mb"],
                row["runs"],
            ]
            for label, row in result["paths"].items()
        ],
    )
    if "search speedup" in result:
        print(
            f"speedup inject --preview {result['inject --preview speedup']:.1f}x, search "
            f"{result['search speedup']:.1f}x, search call alone "
            f"{result['search call alone speedup']:.0f}x"
        )
    if result["search_after_rewrite_p50_ms"] is not None:
        print(
            f"first search after a recorded inject rewrote the store: "
            f"{result['search_after_rewrite_p50_ms']:,.0f} ms"
        )
    os.makedirs(REPO / "bench" / "results", exist_ok=True)
    save(f"knowledge_index_{args.retrieval}_{args.entries}", result)


if __name__ == "__main__":
    main()
