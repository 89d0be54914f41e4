"""What hybrid retrieval costs an add: add-with-dedup into a 10k store in a process whose
mirror carries only the lexical indexes (today's cost, the baseline) against the same process
once a hybrid query has subscribed the vector index, same lessons, same run; plus the first
query after each add (which embeds the new entry) against a query with nothing new, and the
memory the vectors and the packaged model take. Under the default model where the ``minilm``
extra is installed (MiniLM) a query embeds at most a few entries (the rest are filled in the
background), so "the first query after an add" there also embeds up to that many of the store's
backlog; the add itself never embeds, whatever the model.

    python -m bench.knowledge_add_dense [--entries 10000] [--ops 100] [--dir /dev/shm]
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import console, save, table
from bench.knowledge_store import CONFIG, build_store, warm
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.config import Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, dense_index, search
from swarmq.storage.locking import LocalLocks


def rss_mb() -> float:
    """Resident set size now (Linux ``/proc/self/statm``)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed_adds(knowledge: KnowledgeStore, lessons: list[str]) -> list[float]:
    out = []
    for lesson in lessons:
        started = time.perf_counter()
        knowledge.add_lesson(lesson)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="knowledge-add-dense-", dir=args.dir))
    try:
        generator = LessonGenerator(seed=21)
        build_store(root / ".swarm" / "knowledge.jsonl", generator.corpus(args.entries).lessons)
        fresh = generator.corpus(3 * args.ops).lessons
        lexical_config = CONFIG.model_copy(update={"retrieval": Retrieval.LEXICAL})
        lexical = KnowledgeStore(
            root / ".swarm", locks=LocalLocks(root / "locks"), config=lexical_config
        )
        warm(lexical)
        task = QueryContext(text=generator.lesson())
        search(lexical, task)
        # The first adds of a process are faster than the steady state (measured: 1.0 ms for the
        # first 100, 4.0 ms for the next 100, lexical both times): warm up before the baseline.
        timed_adds(lexical, fresh[: args.ops])
        baseline = timed_adds(lexical, fresh[args.ops : 2 * args.ops])

        before_model = rss_mb()
        hybrid = lexical.with_config(CONFIG)
        embedder = hybrid.embedder
        assert embedder is not None
        embedder.embed(["load the model"])
        model_mb = rss_mb() - before_model
        before_vectors = rss_mb()
        started = time.perf_counter()
        search(hybrid, task)  # subscribes the vector index (and embeds every entry, or a few)
        index_seconds = time.perf_counter() - started
        gc.collect()
        vectors_mb = rss_mb() - before_vectors
        with hybrid.swarm.tier_file.mirror.mutex:
            matrix_mb = dense_index(hybrid.swarm, embedder).matrix.nbytes / 2**20
        with_vectors = timed_adds(hybrid, fresh[2 * args.ops :])

        after_add, steady = [], []
        for lesson in generator.corpus(args.ops).lessons:
            hybrid.add_lesson(lesson)
            started = time.perf_counter()
            search(hybrid, task)
            after_add.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            search(hybrid, task)
            steady.append((time.perf_counter() - started) * 1000)

        result = {
            "entries": args.entries,
            "dense_model": CONFIG.model.value,
            "add_p50_ms_lexical_only": statistics.median(baseline),
            "add_p50_ms_with_vector_index": statistics.median(with_vectors),
            "query_p50_ms_after_an_add": statistics.median(after_add),
            "query_p50_ms_nothing_new": statistics.median(steady),
            "index_build_s": index_seconds,
            "model_rss_mb": model_mb,
            "vectors_rss_mb": vectors_mb,
            "vector_matrix_mb": matrix_mb,
        }
        result["add_ratio"] = (
            result["add_p50_ms_with_vector_index"] / result["add_p50_ms_lexical_only"]
        )
        table(
            f"add-with-dedup into {args.entries:,} entries (fs: {root})",
            ["measure", "p50 ms"],
            [
                ["add, lexical indexes only (baseline)", result["add_p50_ms_lexical_only"]],
                ["add, vector index subscribed", result["add_p50_ms_with_vector_index"]],
                ["hybrid query right after an add", result["query_p50_ms_after_an_add"]],
                ["hybrid query, nothing new", result["query_p50_ms_nothing_new"]],
            ],
        )
        console.print(
            f"model {CONFIG.model.value}: "
            f"add with vectors / baseline = {result['add_ratio']:.2f}x (bar ≤ 2x); embedding "
            f"{args.entries:,} entries {index_seconds:.2f} s; model {model_mb:.0f} MB RSS, "
            f"vectors {vectors_mb:.0f} MB RSS (matrix {matrix_mb:.1f} MB)"
        )
        save("knowledge_add_dense", result)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
