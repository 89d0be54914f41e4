"""What meaning-aware ranking of learnings, patterns, pool candidates and memory notes costs a
query: the fused search (``swarmq.federated.search.ask``) under hybrid retrieval (word share and
the packaged model's cosine) against the same stores under lexical retrieval (word share only:
the baseline), same queries, same run; on the largest labelled workspace
(eval/knowledge/workspaces/chromatic-harness: 215 learning and pattern records) and on a
synthetic worker memory of ``--notes`` lines. The first hybrid query of a process embeds every
record (reported apart); the steady state embeds only the query.

    python -m bench.federated_meaning [--notes 10000] [--queries 50]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import REPO, console, save, table
from bench.lesson_corpus import LessonGenerator
from swarmq.federated.search import ask
from swarmq.federated.stores import Stores
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.profiles.search import MemorySearch
from swarmq.storage.locking import LocalLocks

WORKSPACE = REPO / "eval" / "knowledge" / "workspaces" / "chromatic-harness"
NOTES_PER_FILE = 100


def stores_at(root: Path, retrieval: Retrieval, memory: bool) -> Stores:
    swarm = root / ".swarm"
    swarm.mkdir(exist_ok=True)
    knowledge = KnowledgeStore(
        swarm,
        locks=LocalLocks(root / "locks"),
        config=KnowledgeConfig(retrieval=retrieval),
        data_dir=root / "data",
        project_name=root.name,
    )
    agents = AgentsLayout(root / ".agents")
    search = MemorySearch(root / "profiles", root / "shared") if memory else None
    return Stores(root, knowledge, agents if agents.root.is_dir() else None, search)


def timed(stores: Stores, queries: list[str]) -> list[float]:
    out = []
    for text in queries:
        started = time.perf_counter()
        ask(stores, QueryContext(text=text), limit=5)
        out.append((time.perf_counter() - started) * 1000)
    return out


def measure(root: Path, queries: list[str], memory: bool) -> dict[str, float]:
    lexical = stores_at(root, Retrieval.LEXICAL, memory)
    timed(lexical, queries[:5])  # warm the parse caches and the memory index
    baseline = timed(lexical, queries)
    hybrid = stores_at(root, Retrieval.HYBRID, memory)
    started = time.perf_counter()
    ask(hybrid, QueryContext(text=queries[0]), limit=5)  # embeds every record once
    first = (time.perf_counter() - started) * 1000
    steady = timed(hybrid, queries)
    return {
        "lexical_p50_ms": statistics.median(baseline),
        "hybrid_p50_ms": statistics.median(steady),
        "hybrid_p95_ms": sorted(steady)[int(0.95 * (len(steady) - 1))],
        "first_hybrid_query_ms": first,
        "ratio": statistics.median(steady) / statistics.median(baseline),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    generator = LessonGenerator(seed=26)
    queries = [generator.lesson()[:160] for _ in range(args.queries)]
    tmp = Path(tempfile.mkdtemp(prefix="federated-meaning-"))
    try:
        workspace = tmp / "chromatic-harness"
        shutil.copytree(WORKSPACE, workspace)
        flywheel = measure(workspace, queries, memory=False)
        synthetic = tmp / "synthetic-memory"
        memory_dir = synthetic / "profiles" / "w1" / "memory"
        memory_dir.mkdir(parents=True)
        (synthetic / "shared").mkdir()
        notes = generator.corpus(args.notes).lessons
        for start in range(0, len(notes), NOTES_PER_FILE):
            lines = [f"- {' '.join(n.split())}" for n in notes[start : start + NOTES_PER_FILE]]
            (memory_dir / f"{start // NOTES_PER_FILE:04d}.md").write_text(
                "# Notes\n\n" + "\n".join(lines) + "\n", encoding="utf-8"
            )
        memory = measure(synthetic, queries, memory=True)
        # One file rewritten: the next query re-embeds its notes alone.
        (memory_dir / "0000.md").write_text(
            "# Notes\n\n" + "\n".join(f"- {n}" for n in generator.corpus(NOTES_PER_FILE).lessons),
            encoding="utf-8",
        )
        hybrid = stores_at(synthetic, Retrieval.HYBRID, memory=True)
        hybrid.memory.index.refresh() if hybrid.memory is not None else None
        memory["query_after_one_file_changed_ms"] = timed(hybrid, queries[:1])[0]
        result = {"largest_workspace": flywheel, "synthetic_memory": memory, "notes": args.notes}
        table(
            "fused search per query: word share only (lexical) vs word share + cosine (hybrid)",
            ["stores", "lexical p50 ms", "hybrid p50 ms", "ratio", "first hybrid query ms"],
            [
                [
                    "chromatic-harness (215 learnings + patterns)",
                    flywheel["lexical_p50_ms"],
                    flywheel["hybrid_p50_ms"],
                    f"{flywheel['ratio']:.2f}x",
                    flywheel["first_hybrid_query_ms"],
                ],
                [
                    f"synthetic memory ({args.notes:,} notes)",
                    memory["lexical_p50_ms"],
                    memory["hybrid_p50_ms"],
                    f"{memory['ratio']:.2f}x",
                    memory["first_hybrid_query_ms"],
                ],
            ],
        )
        console.print(
            "memory, query after one file of "
            f"{NOTES_PER_FILE} notes changed: {memory['query_after_one_file_changed_ms']:.1f} ms"
        )
        save("federated_meaning", result)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
