"""Issue 28's fresh-process bars through the swarm's resident server: ``swarmq knowledge search
--json``, ``knowledge inject --preview`` and ``knowledge recall --error … --preview`` from fresh
processes (``swarm.yaml`` present, default settings) answered by a running
``python -m swarmq.cli.served`` (what the hooks start), against the same commands computed in the
process (``SWARMQ_LOCAL=1``: today's path through the persisted index) in the same run,
interleaved query by query so both see the same load. Each child's peak RSS is its own
``VmHWM`` (read at exit); the server's resident and peak memory are reported apart, and the floor
of any fresh process (``python -c pass``) alongside.

The stores are those of ``bench.knowledge_index`` in a kept ``--root`` (written there once when
missing; its first indexed call builds the index).

    python -m bench.knowledge_resident --root DIR [--entries 100000] [--runs 15]
                                       [--fill none|synthetic]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.cli_startup import child_env
from bench.common import REPO, save, table
from bench.knowledge_index import WRAPPER, queries, roster
from bench.worker_memory import prefill, stores
from swarmq.storage.spool import config_key

FAILURES = (
    "$ python manage.py test\nbash: python: command not found",
    "$ npm run build\nError: Cannot find module 'webpack'",
    "$ pytest tests/\nModuleNotFoundError: No module named 'yaml'",
)


PHASES = """
import sys, time
marks = [(time.perf_counter(), time.process_time())]
def mark():
    marks.append((time.perf_counter(), time.process_time()))
import typer
import swarmq.cli.root, swarmq.cli.common, swarmq.cli.knowledge
import swarmq.federated.search, swarmq.wiring.federated, swarmq.knowledge.query
mark()  # imports: typer, the CLI, the federation and the ranking (numpy among them)
from swarmq.cli.common import load, store_locks
from swarmq.roster.loader import load_roster
roster = load_roster(sys.argv[1])
mark()  # the roster
locks = store_locks(roster)
mark()  # the lock selection (a Redis connection unless single-host)
from swarmq.wiring.federated import workspace_stores
from swarmq.federated.search import ask
from swarmq.knowledge.query import QueryContext
stores = workspace_stores(roster, locks)
stores.knowledge.embedder
mark()  # the stores and the embedding model (onnxruntime, session, tokenizer)
ask(stores, QueryContext(text=sys.argv[2]), limit=10)
mark()  # the search: query embedding, both indexes opened and checked, ranking, reads
print(*(f"{1000 * (b[0] - a[0]):.1f}/{1000 * (b[1] - a[1]):.1f}"
        for a, b in zip(marks, marks[1:])))
"""
PHASE_NAMES = ("imports", "roster", "locks", "stores + model", "search")


def child(root: Path, env: dict[str, str], args: list[str]) -> tuple[float, float, float]:
    """Wall ms, CPU ms and peak RSS (MB) of one fresh process running ``args``."""
    peak = root / "peak.kb"
    peak.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        args, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, check=False,
    )  # fmt: skip
    wall = 1000 * (time.perf_counter() - started)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = 1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[-6:])} failed: {done.stderr.decode()[-2000:]}")
    rss = int(peak.read_text()) / 1024 if peak.exists() else 0.0
    return wall, cpu, rss


def status(pid: int) -> dict[str, float]:
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle)
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}


def measure(root: Path, entries: int, runs: int, fill: str) -> dict[str, Any]:
    stores(root, entries)
    (root / "peak.py").write_text(WRAPPER)
    (root / "home").mkdir(exist_ok=True)
    env = {**child_env(root, REPO, True), "SWARMQ_STATE": str(root / "state")}
    config = roster(root, "swarm.yaml", True, "hybrid")
    local_env = {**env, "SWARMQ_LOCAL": "1"}
    filled = None
    if fill == "synthetic":  # every entry has a vector: the server's filler has nothing to do
        filled = prefill(config, "synthetic")
        print(f"filled: {filled}", flush=True)
    wrapper = [sys.executable, str(root / "peak.py"), str(root / "peak.kb")]
    texts = queries(runs + 1)
    commands = {
        "knowledge search --json": lambda t, i: ["knowledge", "search", "--json", t],
        "knowledge inject --preview": lambda t, i: ["knowledge", "inject", "--preview", t],
        "knowledge recall --preview": lambda t, i: [
            "knowledge",
            "recall",
            "--preview",
            "--error",
            FAILURES[i % len(FAILURES)],
        ],
    }
    child(root, local_env, [*wrapper, "-c", str(config), *commands["knowledge search --json"](
        texts[0], 0)])  # fmt: skip  # the index is there (built once), bytecode compiled
    state = root / "state" / "hooks" / config_key(config)  # swarm_state_dir in the children
    (state / "server.sock").unlink(missing_ok=True)  # a terminated server's, not answering
    log = (root / "server.log").open("ab")
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "swarmq.cli.served", "--config", str(config), "--idle", "3600"],
        cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        while not (state / "server.sock").exists():
            if server.poll() is not None or time.perf_counter() - started > 600:
                raise SystemExit(f"the server did not start: see {root / 'server.log'}")
            time.sleep(0.05)
        warm_ms = 1000 * (time.perf_counter() - started)
        print(f"server listening after {warm_ms:,.0f} ms", flush=True)
        rows: dict[str, dict[str, list[float]]] = {}
        loads: list[float] = []

        def add(label: str, sample: tuple[float, float, float]) -> None:
            row = rows.setdefault(label, {"wall": [], "cpu": [], "rss": []})
            for key, value in zip(("wall", "cpu", "rss"), sample, strict=True):
                row[key].append(value)

        for i, text in enumerate(texts[1:]):
            loads.append(os.getloadavg()[0])
            add("python -c pass", child(root, env, [sys.executable, "-c", "pass"]))
            for label, argv in commands.items():
                args = [*wrapper, "-c", str(config), *argv(text, i)]
                add(f"{label} (resident)", child(root, env, args))
                add(f"{label} (in process)", child(root, local_env, args))
        server_memory = status(server.pid)
        phases: list[list[tuple[float, float]]] = []
        for text in texts[1:]:
            done = subprocess.run(
                [sys.executable, "-c", PHASES, str(config), text], cwd=root, env=local_env,
                stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True,
            )  # fmt: skip
            pairs = [tuple(float(x) for x in p.split("/")) for p in done.stdout.split()[-5:]]
            phases.append([(w, c) for w, c in pairs])
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    summary = {
        label: {
            "p50_ms": statistics.median(row["wall"]),
            "cpu_p50_ms": statistics.median(row["cpu"]),
            "max_ms": max(row["wall"]),
            "peak_rss_mb": max(row["rss"]),
            "runs": len(row["wall"]),
        }
        for label, row in rows.items()
    }
    for label, row in summary.items():
        if "resident" in label and row["peak_rss_mb"] > 100:
            print(f"warning: {label}: a run computed in process ({row['peak_rss_mb']:.0f} MB)")
    for label in commands:
        summary[label + " ratio"] = {
            "in process / resident p50": summary[f"{label} (in process)"]["p50_ms"]
            / summary[f"{label} (resident)"]["p50_ms"]
        }
    return {
        "entries": entries,
        "fill": filled,
        "server_start_ms": warm_ms,
        "server_rss_mb": server_memory["VmRSS"],
        "server_peak_mb": server_memory["VmHWM"],
        "load_min": min(loads),
        "load_max": max(loads),
        "paths": summary,
        "phases": {
            name: {
                "wall_p50_ms": statistics.median(run[i][0] for run in phases),
                "cpu_p50_ms": statistics.median(run[i][1] for run in phases),
            }
            for i, name in enumerate(PHASE_NAMES)
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--fill", choices=["none", "synthetic"], default="none",
        help="synthetic: every entry's vector filled first by a stand-in of the model's name and "
        "dimension (bench.worker_memory), as after the server's background fill",
    )  # fmt: skip
    args = parser.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    result = measure(args.root, args.entries, args.runs, args.fill)
    table(
        f"fresh processes over {args.entries:,} swarm + {args.entries // 10:,} hive entries, "
        f"load average {result['load_min']:.1f}-{result['load_max']:.1f}; server started in "
        f"{result['server_start_ms']:,.0f} ms, resident {result['server_rss_mb']:.0f} MB "
        f"(peak {result['server_peak_mb']:.0f} MB)",
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
            if "p50_ms" in row
        ],
    )
    for label, row in result["paths"].items():
        if "p50_ms" not in row:
            print(f"{label}: in process / resident p50 {row['in process / resident p50']:.1f}x")
    print("in-process search by phase, p50 wall / CPU ms:")
    for name, phase in result["phases"].items():
        print(f"  {name}: {phase['wall_p50_ms']:.1f} / {phase['cpu_p50_ms']:.1f}")
    save(f"knowledge_resident_{args.entries}", result)


if __name__ == "__main__":
    main()
