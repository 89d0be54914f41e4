"""What CJK-aware retrieval terms cost on an English store: the persisted index's build time per
line and a lexical search's time through it, this tree against a baseline tree (main), in
fresh processes, interleaved round by round, on the same 10k synthetic English store.

Each child imports the tree it is given (``PYTHONPATH``), rebuilds the index of its own copy of
the store (each tree keeps its own index layout), then searches it ``--queries`` times with
task-length English texts (a store this process has not loaded is read through its index).

    python -m bench.retrieval_terms --baseline-tree /path/to/main [--entries 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import REPO, save, table
from bench.knowledge_inject import contexts, write_tier
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.model import Tier

CHILD = """
import json, sys, time
from pathlib import Path
root, texts = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.storage.locking import LocalLocks
store = root / "project" / ".swarm" / "knowledge.jsonl"
started = time.perf_counter()
FileIndex.open(store, rebuild=True).close()
build = time.perf_counter() - started
config = KnowledgeConfig(swarm_max_entries=None, retrieval=Retrieval.LEXICAL, hive_enabled=False)
knowledge = KnowledgeStore(store.parent, locks=LocalLocks(root / "locks"), config=config,
                           data_dir=root / "data", project_name="bench")
times, found = [], 0
for text in texts:
    started = time.perf_counter()
    found += len(search(knowledge, QueryContext(text=text), limit=8))
    times.append(time.perf_counter() - started)
assert knowledge.swarm.tier_file.mirror.state is None, "the store was loaded"
print(json.dumps({"build_s": build, "query_ms": [t * 1000 for t in times], "found": found}))
"""


def child(tree: Path, root: Path, texts: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(texts)],
        env=env,
        cwd=tree,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline-tree", type=Path, required=True)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    generator = LessonGenerator()
    lessons = [generator.lesson() for _ in range(args.entries)]
    trees = {"baseline": args.baseline_tree.resolve(), "this": REPO}
    with tempfile.TemporaryDirectory(prefix="swarmq-bench-terms-") as tmp:
        base = Path(tmp)
        first = base / "baseline" / "project" / ".swarm" / "knowledge.jsonl"
        write_tier(first, lessons, Tier.SWARM, seed=1)
        copy = base / "this" / "project" / ".swarm" / "knowledge.jsonl"
        copy.parent.mkdir(parents=True)
        shutil.copyfile(first, copy)
        texts = base / "texts.json"
        texts.write_text(json.dumps([c.text for c in contexts(generator, args.queries)]))
        results: dict[str, list[dict[str, object]]] = {name: [] for name in trees}
        loads: list[str] = []
        for _ in range(args.rounds):
            for name, tree in trees.items():
                loads.append(Path("/proc/loadavg").read_text().split()[0])
                results[name].append(child(tree, base / name, texts))
    rows = []
    summary: dict[str, dict[str, float]] = {}
    for name, runs in results.items():
        builds = [float(r["build_s"]) for r in runs]  # type: ignore[arg-type]
        queries = [q for r in runs for q in r["query_ms"]]  # type: ignore[attr-defined]
        found = {r["found"] for r in runs}
        summary[name] = {
            "build_us_per_line": statistics.median(builds) / args.entries * 1e6,
            "query_p50_ms": statistics.median(queries),
            "query_mean_ms": statistics.fmean(queries),
        }
        rows.append(
            [
                name,
                summary[name]["build_us_per_line"],
                summary[name]["query_p50_ms"],
                summary[name]["query_mean_ms"],
                str(sorted(found)),  # type: ignore[type-var]
            ]
        )
    table(
        f"retrieval terms, {args.entries} English entries, {args.rounds} rounds interleaved "
        f"(load {', '.join(loads)})",
        ["tree", "build µs/line", "query p50 ms", "query mean ms", "results found"],
        rows,
    )
    ratio = {k: summary["this"][k] / summary["baseline"][k] for k in summary["this"]}
    print("ratio this/baseline: " + ", ".join(f"{k} {v:.3f}" for k, v in ratio.items()))
    save("retrieval_terms", {"summary": summary, "ratio": ratio, "loadavg": loads})


if __name__ == "__main__":
    main()
