"""Reading commands from fresh processes, two source trees interleaved: what a read pays for
its lock selection (a Redis connection and the client's imports before the read connected
lazily, at its first write).

Each round runs every command once per tree, the trees alternating, ``swarm.yaml`` present
(Redis answering), ``SWARMQ_LOCAL=1`` (the process computes its own answer, no resident
server). Wall and CPU (user + system of the child) p50 and peak RSS per tree and command; then
``python -X importtime`` of one ``knowledge search`` per tree, its largest top-level imports.

    python -m bench.read_locks --entries 10000 --rounds 7 --tree before=/path/to/tree \\
        --tree after=. [--root DIR] [--retrieval lexical|hybrid]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.cli_startup import child_env
from bench.common import table
from bench.knowledge_index import WRAPPER, queries, roster
from bench.knowledge_inject import write_tier
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.model import Tier

ERR = "$ python manage.py test\nzsh:1: command not found: python"


def commands(config: Path, text: str) -> dict[str, list[str]]:
    base = ["-c", str(config)]
    return {
        "knowledge search --json": [*base, "knowledge", "search", "--json", text],
        "knowledge inject --preview": [*base, "knowledge", "inject", "--preview", text],
        "knowledge recall --preview": [*base, "knowledge", "recall", "--preview", "--error", ERR],
        "knowledge list": [*base, "knowledge", "list"],
        "lookup --no-cite": [*base, "lookup", "--no-cite", text],
    }


def once(root: Path, env: dict[str, str], argv: list[str]) -> tuple[float, float, float]:
    """Wall ms, CPU ms and peak RSS (MB) of one fresh ``swarmq`` process."""
    peak = root / "peak.kb"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(root / "peak.py"), str(peak), *argv],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
    )  # fmt: skip
    wall = 1000 * (time.perf_counter() - started)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = 1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"swarmq {' '.join(argv)} failed: {done.stderr.decode()[-2000:]}")
    return wall, cpu, int(peak.read_text()) / 1024


def importtime(root: Path, env: dict[str, str], argv: list[str], top: int) -> list[list[object]]:
    """The ``top`` largest top-level imports (cumulative µs) of one process running ``argv``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(root / "peak.py"), str(root / "it.kb"), *argv],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if cumulative.strip().isdigit() and not name.startswith("  "):  # top level only
            rows.append([name.strip(), int(cumulative) / 1000])
    return sorted(rows, key=lambda r: -float(str(r[1])))[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tree", action="append", required=True, help="label=source directory")
    parser.add_argument("--root", type=Path, default=None, help="a kept directory (stores reused)")
    parser.add_argument("--retrieval", choices=["hybrid", "lexical"], default="lexical")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    root = args.root or Path(tempfile.mkdtemp(prefix="read-locks-"))
    root.mkdir(parents=True, exist_ok=True)
    swarm_file = root / "project" / ".swarm" / "knowledge.jsonl"
    generator = LessonGenerator(seed=9)
    if not swarm_file.exists():
        started = time.perf_counter()
        write_tier(swarm_file, generator.corpus(args.entries).lessons, Tier.SWARM, 1)
        hive = root / "hive" / "shared-learnings.jsonl"
        write_tier(hive, generator.corpus(max(1, args.entries // 10)).lessons, Tier.HIVE, 2)
        print(f"stores written in {time.perf_counter() - started:.0f} s", flush=True)
    (root / "peak.py").write_text(WRAPPER)
    (root / "home").mkdir(exist_ok=True)
    config = roster(root, "swarm.yaml", True, args.retrieval)
    envs = {label: {**child_env(root, Path(src).resolve(), True), "SWARMQ_LOCAL": "1"}
            for label, src in trees.items()}  # fmt: skip
    texts = queries(args.rounds + 1)
    for label, env in envs.items():  # the index built (or checked) and bytecode compiled
        started = time.perf_counter()
        for argv in commands(config, texts[0]).values():
            once(root, env, argv)
        print(f"{label}: first calls {time.perf_counter() - started:.1f} s", flush=True)
    figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for text in texts[1:]:
        for label, env in envs.items():
            for name, argv in commands(config, text).items():
                figures.setdefault((name, label), []).append(once(root, env, argv))
    table(
        f"fresh processes, {args.entries:,} swarm + {max(1, args.entries // 10):,} hive entries, "
        f"{args.retrieval} retrieval, {args.rounds} rounds",
        ["command", "tree", "p50 wall ms", "p50 CPU ms", "peak RSS MB"],
        [
            [
                name,
                label,
                statistics.median(r[0] for r in runs),
                statistics.median(r[1] for r in runs),
                max(r[2] for r in runs),
            ]
            for (name, label), runs in sorted(figures.items())
        ],
    )
    search = commands(config, texts[1])["knowledge search --json"]
    for label, env in envs.items():
        table(f"{label}: largest top-level imports of `knowledge search`",
              ["module", "cumulative ms"], importtime(root, env, search, args.top))  # fmt: skip


if __name__ == "__main__":
    main()
