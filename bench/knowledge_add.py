"""Add-with-dedup into a 10k-entry knowledge store: swarmq's indexed store against a plain
full-scan implementation (opencode-swarm's algorithm: read and parse the file, re-tokenise and
compare every lesson, scan every lesson for contradictions, then append or rewrite), same
lessons, same validation rules, same durable writes, same run.

    python -m bench.knowledge_add [--entries 10000] [--ops 120] [--big 100000] [--dir /dev/shm]
        [--procs 1 --threads 8 --group-ops 2400]   # the 8-writer group-commit mode (0 = skip)

The 8-writer mode (``bench.knowledge_add_group``) adds concurrently with group commit and
prints adds/s against the fsync floor (one fsync'd append at a time on the same filesystem,
measured in the same run), for two workloads: one phase (near-duplicates of lessons already
confirmed in this phase: no rewrite) and the mixed workload above (every near-duplicate is a
first confirmation, so its group rewrites the whole file).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import BENCH_REDIS_URL, console, save, scratch_dir, scratch_swarm, table
from bench.knowledge_add_group import fsync_floor, run_writers
from bench.knowledge_store import CONFIG, build_store, warm
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.contradiction import has_contradiction
from swarmq.knowledge.dedup import find_near_duplicate_scan
from swarmq.knowledge.model import Entry, Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson, new_entry, phase_confirmation, reinforce_entry
from swarmq.knowledge.validation import check_safety, check_structure, validate_directive_fields
from swarmq.storage.atomic import append_lines, write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.jsonl import read_jsonl
from swarmq.storage.locking import LocalLocks


def workload(generator: LessonGenerator, stored: list[str], ops: int) -> list[str]:
    """Two thirds new lessons, one third near-duplicates of stored ones (reinforcements)."""
    rng = random.Random(11)
    out = []
    for _ in range(ops):
        if rng.random() < 1 / 3:
            out.append(generator.mutate(rng.choice(stored)))
        else:
            out.append(generator.lesson())
    return out


def baseline_add(path: Path, rejected: Path, lesson: str, phase: int) -> str:
    """The plain implementation: everything recomputed from the file on every add."""
    entry = new_entry(
        NewLesson(lesson),
        tier=Tier.SWARM,
        project_name="bench",
        phase=phase,
        at=iso(),
        config=CONFIG,
    )
    for verdict in (
        check_structure(
            entry.lesson, entry.get("category"), entry.get("scope"), entry.get("confidence")
        ),
        check_safety(entry.lesson, CONFIG.validation_mode),
    ):
        if not verdict.valid:
            append_lines(rejected, [entry.line()])
            return "rejected"
    if validate_directive_fields(entry.data):
        return "rejected"
    current = read_jsonl(path)
    entries = [Entry(line.value, raw=line.raw) for line in current.lines]
    active = [e for e in entries if e.is_active]
    hit = find_near_duplicate_scan(lesson, [e.lesson for e in active], CONFIG.dedup_threshold)
    if hit is not None:
        twin = active[hit]
        changed, outcome = reinforce_entry(
            twin,
            phase_confirmation(phase, iso(), "bench"),
            max_confirmed_by=CONFIG.max_confirmed_by,
        )
        if outcome == "reinforced":
            body = (
                "\n".join(changed.line() if e.id == twin.id else e.line() for e in entries) + "\n"
            )
            write_atomic(path, body)
            return "reinforced"
        return outcome
    # a possible contradiction is a review warning (opencode-swarm 7.x): stored all the same
    has_contradiction(lesson, [e.lesson for e in entries], CONFIG.validation_mode)
    append_lines(path, [entry.line()])
    return "added"


def run(root: Path, entries: int, ops: int) -> dict[str, Any]:
    generator = LessonGenerator(seed=5)
    stored = generator.corpus(entries, dup_rate=0.0).lessons
    lessons = workload(generator, stored, ops)
    results: dict[str, Any] = {"entries": entries, "ops": ops}
    outcomes: dict[str, list[str]] = {}
    for name in ("swarmq", "baseline"):
        project = root / name / ".swarm"
        build_store(project / "knowledge.jsonl", stored)
        knowledge = KnowledgeStore(
            project,
            locks=LocalLocks(root / name / "locks"),
            config=CONFIG,
            data_dir=root / name / "hive",
        )
        started = time.perf_counter()
        if name == "swarmq":  # one-time cost, reported apart: parse + build the indexes
            warm(knowledge)
        cold = time.perf_counter() - started
        done: list[str] = []
        started = time.perf_counter()
        for phase, lesson in enumerate(lessons, start=2):
            if name == "swarmq":
                done.append(knowledge.swarm.add(NewLesson(lesson), phase=phase).outcome)
            else:
                with knowledge.locks.hold(knowledge.swarm.files.resource):
                    done.append(
                        baseline_add(
                            knowledge.swarm.files.knowledge,
                            knowledge.swarm.files.rejected,
                            lesson,
                            phase,
                        )
                    )
        elapsed = time.perf_counter() - started
        outcomes[name] = done
        results[name] = {
            "ops_per_s": ops / elapsed,
            "ms_per_op": 1000 * elapsed / ops,
            "cold_load_s": cold if name == "swarmq" else None,
        }
    assert outcomes["swarmq"] == outcomes["baseline"], "both implementations must decide alike"
    results["outcomes"] = {k: outcomes["swarmq"].count(k) for k in sorted(set(outcomes["swarmq"]))}
    results["ratio"] = results["swarmq"]["ops_per_s"] / results["baseline"]["ops_per_s"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--ops", type=int, default=120)
    parser.add_argument(
        "--big", type=int, default=100_000, help="also time swarmq alone at this size (0 = skip)"
    )
    parser.add_argument("--big-ops", type=int, default=300)
    parser.add_argument(
        "--dir", type=Path, default=None, help="where the stores live (default: a temp dir)"
    )
    parser.add_argument("--procs", type=int, default=1, help="writer processes (0 = skip)")
    parser.add_argument("--threads", type=int, default=8, help="writer threads per process")
    parser.add_argument("--group-ops", type=int, default=2400)
    parser.add_argument(
        "--redis-locks", action="store_true", help="writers take Redis store locks, as workers do"
    )
    parser.add_argument("--only-writers", action="store_true", help="skip the 1-writer runs")
    args = parser.parse_args()
    root = scratch_dir("knowledge-add-", args.dir)
    try:
        if args.procs:
            writers = concurrent(root / "writers", args)
            if args.only_writers:
                save("knowledge_add_writers", writers)
                return
        result = run(root, args.entries, args.ops)
        rows = [
            [name, result[name]["ops_per_s"], result[name]["ms_per_op"]]
            for name in ("swarmq", "baseline")
        ]
        if args.big:
            big = big_store(root / "big", args.big, args.big_ops)
            result["big"] = big
            rows.append([f"swarmq @ {args.big:,}", big["ops_per_s"], big["ms_per_op"]])
            for outcome, ms in big["ms_by_outcome"].items():
                rows.append([f"  @ {args.big:,}: {outcome}", 1000 / ms, ms])
        table(
            f"add-with-dedup into {args.entries:,} entries ({args.ops} adds, fs: {root})",
            ["implementation", "adds/s", "ms/add"],
            rows,
        )
        console.print(
            f"outcomes {result['outcomes']}; ratio swarmq/full-scan = {result['ratio']:.1f}x; "
            f"one-time load + index build of {args.entries:,} entries "
            f"{result['swarmq']['cold_load_s'] * 1000:.0f} ms"
        )
        if args.procs:
            result["writers"] = writers
        save("knowledge_add", result)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def concurrent(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The 8-writer mode: both workloads, each right after its own fsync-floor measurement."""
    generator = LessonGenerator(seed=5)
    stored = generator.corpus(args.entries, dup_rate=0.0).lessons
    lessons = workload(generator, stored, args.group_ops)
    line = new_entry(
        NewLesson(lessons[0]),
        tier=Tier.SWARM,
        project_name="bench",
        phase=1,
        at=iso(),
        config=CONFIG,
    ).line()
    out: dict[str, Any] = {}
    rows = []
    for name, phases in (
        ("one phase", [1] * len(lessons)),
        ("mixed phases", [2 + i for i in range(len(lessons))]),
    ):
        root.mkdir(parents=True, exist_ok=True)
        bursts = [fsync_floor(root, line) for _ in range(3)]
        with scratch_swarm() as swarm:
            result = run_writers(
                root / name.replace(" ", "-"),
                stored,
                lessons,
                phases,
                procs=args.procs,
                threads=args.threads,
                config=CONFIG,
                redis_url=BENCH_REDIS_URL if args.redis_locks else None,
                swarm=swarm,
            )
        bursts += [fsync_floor(root, line) for _ in range(3)]  # before and after: a median
        floor = statistics.median(bursts)  # that one noisy burst cannot move
        result["fsync_floor_per_s"] = floor
        result["fsync_floor_bursts"] = bursts
        result["ratio_to_floor"] = result["ops_per_s"] / floor
        out[name] = result
        rows.append(
            [
                name,
                result["ops_per_s"],
                result["ms_per_op"],
                floor,
                f"{result['ratio_to_floor']:.2f}",
                f"{result['mean_group']:.1f}",
                " ".join(f"{k}={v}" for k, v in result["outcomes"].items()),
            ]
        )
    table(
        f"{args.procs} processes x {args.threads} threads "
        f"({'Redis' if args.redis_locks else 'same-host'} locks) adding into {args.entries:,} entries "
        f"({args.group_ops} adds, fs: {root}, load {os.getloadavg()[0]:.2f})",
        [
            "workload",
            "adds/s",
            "ms/add",
            "fsync floor appends/s",
            "ratio",
            "adds/lock hold",
            "outcomes",
        ],
        rows,
    )
    return out


def big_store(root: Path, entries: int, ops: int) -> dict[str, Any]:
    generator = LessonGenerator(seed=6)
    stored = generator.corpus(entries, dup_rate=0.0).lessons
    lessons = workload(generator, stored, ops)
    project = root / ".swarm"
    build_store(project / "knowledge.jsonl", stored)
    knowledge = KnowledgeStore(
        project, locks=LocalLocks(root / "locks"), config=CONFIG, data_dir=root / "hive"
    )
    started = time.perf_counter()
    warm(knowledge)
    cold = time.perf_counter() - started
    per_outcome: dict[str, list[float]] = {}
    started = time.perf_counter()
    for phase, lesson in enumerate(lessons, 2):
        begin = time.perf_counter()
        outcome = knowledge.swarm.add(NewLesson(lesson), phase=phase).outcome
        per_outcome.setdefault(outcome, []).append(1000 * (time.perf_counter() - begin))
    elapsed = time.perf_counter() - started
    return {
        "entries": entries,
        "ops": ops,
        "ops_per_s": ops / elapsed,
        "ms_per_op": 1000 * elapsed / ops,
        "cold_load_s": cold,
        "outcomes": {k: len(v) for k, v in sorted(per_outcome.items())},
        "ms_by_outcome": {k: sum(v) / len(v) for k, v in sorted(per_outcome.items())},
    }


if __name__ == "__main__":
    main()
