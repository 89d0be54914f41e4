"""A full consolidation pass (dry run) on one generated store, two code trees interleaved.

    python -m bench.consolidation_full --size 100000 --baseline-tree /tmp/main-tree [--tree .] [--pairs 2]

The store is the state :mod:`bench.consolidation_nightly` consolidates in its full child: its
size less 1 % of :mod:`bench.lesson_corpus` lessons (2 % near-duplicates), then 1 % appended
(half near-duplicates of stored lessons, half new lessons), with a ``swarm.yaml`` beside it.
Each run is a fresh process on a fresh copy of that store: ``run_roster_scope(..., full=True,
dry_run=True)``, its wall and CPU time, peak RSS (``VmHWM``), rounds, and its exact actions
(kind, survivor, other), so the two trees' plans are compared action by action, and in plan
order with their similarities, rounds and scores. The trees
alternate (baseline, this tree, baseline, ...), so both meet the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, console, save, table
from bench.consolidation_nightly import line_of, roster, store_path
from bench.lesson_corpus import LessonGenerator
from swarmq.storage.clock import iso

CHILD = """
import json, sys, time
started = time.perf_counter()
from pathlib import Path
import swarmq
from swarmq.roster.loader import load_roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.consolidation import run_roster_scope
roster = load_roster(Path(sys.argv[1]))
rounds = []
def progress(kind, data):
    if kind == "round":
        rounds.append([data["round"], data["actions"], round(time.perf_counter() - started, 2)])
report = run_roster_scope(roster, LocalLocks(Path(sys.argv[2])), "swarm", full=True,
                          dry_run=True, progress=progress)
seconds = time.perf_counter() - started
status = Path("/proc/self/status").read_text()
hwm = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:"))
print(json.dumps({"tree": str(Path(swarmq.__file__).parent.parent), "seconds": seconds,
                  "cpu_seconds": time.process_time(), "peak_rss_mib": hwm / 1024,
                  "rounds": report.plan.rounds, "converged": report.plan.converged,
                  "round_log": rounds, "counts": report.plan.counts(),
                  "actions": sorted([a.kind.value, a.keep, a.other, a.reason.value]
                                    for a in report.plan.actions),
                  "ordered": [[a.kind.value, a.keep, a.other, a.reason.value, a.similarity,
                               a.round, a.scores] for a in report.plan.actions]}))
"""


def store_lessons(size: int, new_share: float) -> tuple[list[str], list[str]]:
    """The store's lessons before the night and those appended (same generators and seeds as
    the nightly bench's full child)."""
    generator = LessonGenerator(seed=28)
    n_new = max(1, int(size * new_share))
    lessons = generator.corpus(size - n_new, dup_rate=0.02).lessons
    rng = random.Random(size)
    fresh = LessonGenerator(seed=2028)
    added = [
        generator.mutate(rng.choice(lessons)) if k % 2 else fresh.lesson() for k in range(n_new)
    ]
    return lessons, added


def write_store(root: Path, size: int, new_share: float) -> None:
    """The nightly bench's state before its full child (same generators and seeds)."""
    lessons, added = store_lessons(size, new_share)
    at = iso()
    path = store_path(root)
    path.parent.mkdir(parents=True)
    lines = [line_of(t, at) for t in lessons] + [line_of(t, iso()) for t in added]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    roster(root)


def run_child(tree: Path, base: Path, scratch: Path) -> dict[str, Any]:
    """One dry full pass from a fresh process importing ``tree``'s code, on a copy of ``base``."""
    root = Path(tempfile.mkdtemp(prefix="full-", dir=scratch))
    try:
        shutil.copytree(base / "project", root / "project")
        swarm_yaml = roster(root)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(swarm_yaml), str(root / "locks")],
            cwd=tree, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"run in {tree} failed:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        result["load"] = Path("/proc/loadavg").read_text().split()[:3]
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--new", type=float, default=0.01)
    parser.add_argument("--baseline-tree", type=Path, required=True)
    parser.add_argument("--tree", type=Path, default=REPO, help="the tree measured against it")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix=f"consolidation-full{args.size}-", dir=args.dir))
    try:
        begun = time.perf_counter()
        base = scratch / "store"
        write_store(base, args.size, args.new)
        print(f"store of {args.size:,} written in {time.perf_counter() - begun:.0f} s", flush=True)
        trees = {"baseline": args.baseline_tree.resolve(), "tree": args.tree.resolve()}
        runs: list[dict[str, Any]] = []
        for pair in range(args.pairs):
            for name, tree in trees.items():
                result = run_child(tree, base, scratch)
                result["name"], result["pair"] = name, pair
                runs.append(result)
                brief = {k: v for k, v in result.items() if k not in ("actions", "ordered")}
                print(json.dumps(brief), flush=True)
        plans = {name: [r["actions"] for r in runs if r["name"] == name] for name in trees}
        stable = {name: all(p == found[0] for p in found) for name, found in plans.items()}
        before = {tuple(a) for a in plans["baseline"][0]}
        after = {tuple(a) for a in plans["tree"][0]}
        ordered = {name: [r["ordered"] for r in runs if r["name"] == name] for name in trees}
        comparison = {
            "deterministic": stable,
            "identical": before == after,
            "same_order_and_scores": ordered["baseline"][0] == ordered["tree"][0],
            "only_baseline": sorted(before - after),
            "only_tree": sorted(after - before),
        }
        console.print(json.dumps(comparison, indent=1))
        rows = [
            [r["name"], r["pair"], f"{r['seconds']:.1f}", f"{r['cpu_seconds']:.1f}",
             f"{r['peak_rss_mib']:.0f}", r["rounds"], len(r["actions"]), " ".join(r["load"])]
            for r in runs
        ]  # fmt: skip
        table(
            f"full consolidation dry run, {args.size:,} entries, fresh processes",
            ["tree", "pair", "wall s", "CPU s", "peak MiB", "rounds", "actions", "load"],
            rows,
        )
        save(
            f"consolidation_full_{args.size}_actions",
            {name: found[0] for name, found in plans.items()},
        )
        save(
            "consolidation_full",
            {
                "size": args.size,
                "runs": [
                    {k: v for k, v in r.items() if k not in ("actions", "ordered")} for r in runs
                ],
                "comparison": comparison,
            },
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
