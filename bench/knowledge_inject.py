"""Injection query over 10k swarm + 10k hive entries: p50 / p99 of ranking + rendering the
``<swarm_knowledge_directives>`` block with the default hybrid retrieval (query embedding
included; target p50 ≤ 15 ms), against the lexical-only path and a plain full scan that scores
every entry, same contexts, same run; plus the full recorded injection (receipt commit and shown
counters written back) and the memory the entry vectors take.

Under a slow model (MiniLM, the default where the ``minilm`` extra is installed) the first
query embeds only a few entries; the background fill (``swarmq.knowledge.vectors.fill``, what
the hook server and ``maturity.embed`` run) is then timed on its own, and the queries are
measured once every entry has its vector.

    python -m bench.knowledge_inject [--entries 10000] [--queries 300] [--dir /dev/shm]
        [--dense-model auto|wordllama|minilm] [--fill model|synthetic] [--profile FILE]

``--fill synthetic`` fills the entry vectors with a stand-in of the model's name and dimension
(seeded random unit vectors, :class:`bench.common.StandIn`) in seconds instead of a
quarter of an hour: the rows, files and scans are the real ones and every query is still
embedded by the real model, so the timings hold; which entries the dense side finds does not.
``--profile FILE`` writes a cProfile of the hybrid query + render calls (pstats format).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import math
import random
import shutil
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common import StandIn, console, save, scratch_dir, table
from bench.lesson_corpus import AGENTS, LessonGenerator
from swarmq.federated.inject import prepare as federated_prepare
from swarmq.federated.stores import Stores
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.config import DenseModel, KnowledgeConfig, Retrieval
from swarmq.knowledge.inject import inject
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked, dense_index, search
from swarmq.knowledge.ranking import static_breakdown
from swarmq.knowledge.reinforcement import NewLesson, new_entry
from swarmq.knowledge.render import budget_for, render_directives
from swarmq.knowledge.vectors import fill
from swarmq.profiles.search import MemorySearch
from swarmq.similarity.onnx_embedder import TOKENIZER
from swarmq.similarity.text import word_tokens
from swarmq.storage.clock import iso
from swarmq.storage.locking import LocalLocks

CONFIG = KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None)
TOOLS = ["bash", "task", "save_plan", "edit", "write", "read", "grep", "update_task_status"]


def directives(rng: random.Random, lesson: str) -> dict[str, Any]:
    roll = rng.random()
    if roll > 0.08:
        return {}
    words = lesson.split()
    fields: dict[str, Any] = {
        "triggers": [" ".join(words[:3]).lower()],
        "required_actions": [" ".join(words[:8])],
        "applies_to_tools": [rng.choice(TOOLS)],
        "applies_to_agents": [rng.choice(AGENTS)],
        "directive_priority": "critical" if roll < 0.005 else rng.choice(["low", "medium", "high"]),
    }
    return fields


def write_tier(path: Path, lessons: list[str], tier: Tier, seed: int) -> None:
    rng = random.Random(seed)
    at = iso()
    lines = []
    for text in lessons:
        new = NewLesson(
            text or "(empty lesson text)",
            confidence=round(rng.uniform(0.3, 1.0), 2),
            directives=directives(rng, text or "x"),
        )
        lines.append(
            new_entry(
                new, tier=tier, project_name=f"p{rng.randrange(5)}", phase=1, at=at, config=CONFIG
            ).line()
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def contexts(generator: LessonGenerator, count: int) -> list[QueryContext]:
    rng = random.Random(3)
    out = []
    for _ in range(count):
        text = " ".join(generator.lesson() for _ in range(2))
        out.append(
            QueryContext(text=text, tool=rng.choice(TOOLS), agent=rng.choice(AGENTS), phase=2)
        )
    return out


TASK_SETS = ("tasks.json", "labels.json", "workspaces/queries.json")
"""The eval's task-worded query sets (eval/knowledge): their tune split's lengths are the
task-length queries' (the held split is not looked at)."""


def minilm_tokenizer() -> Any:
    """MiniLM's own WordPiece tokenizer (the file swarmq ships), to count a query's tokens."""
    from importlib import resources

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(
        (resources.files("swarmq.similarity") / "data" / TOKENIZER).read_text("utf-8")
    )
    tokenizer.no_padding()  # the file pads to 128; the embedder embeds unpadded
    return tokenizer


def task_lengths() -> list[int]:
    """MiniLM tokens (the model's own WordPiece) of each tune-split task-worded query of the
    eval: 11-21 tokens for nine in ten, median 13-17 by set."""
    tokenizer = minilm_tokenizer()
    root = Path(__file__).resolve().parent.parent / "eval" / "knowledge"
    out = []
    for name in TASK_SETS:
        for query in json.loads((root / name).read_text("utf-8"))["queries"]:
            if query.get("split") == "tune":
                out.append(len(tokenizer.encode(query["text"].lower()).ids))
    return sorted(out)


def task_length(contexts: list[QueryContext], lengths: list[int]) -> list[QueryContext]:
    """Each context's text cut to the longest word prefix within a token count drawn from
    ``lengths`` (the same seeded draw each run): queries as long as real tasks, with the
    synthetic words (which split into more word pieces than English does)."""
    tokenizer = minilm_tokenizer()
    rng = random.Random(5)
    out = []
    for context in contexts:
        target = rng.choice(lengths)
        words = context.text.split()
        keep = 1
        while keep < len(words):
            if len(tokenizer.encode(" ".join(words[: keep + 1])).ids) > target:
                break
            keep += 1
        out.append(dataclasses.replace(context, text=" ".join(words[:keep])))
    return out


def full_scan(knowledge: KnowledgeStore, context: QueryContext, limit: int) -> list[Ranked]:
    """Score every active in-scope entry of both tiers (the naive ranker)."""
    query = word_tokens(context.haystack())
    results = []
    for store in (knowledge.swarm, knowledge.hive):
        for entry in store.read().entries:
            if not entry.is_active or entry.scope not in CONFIG.scope_filter:
                continue
            tokens = word_tokens(" ".join([entry.lesson, *entry.strings("triggers"), *entry.tags]))
            overlap = len(query & tokens) / (len(query) or 1)
            score = sum(static_breakdown(entry).values()) + overlap
            results.append(Ranked(entry, str(store.tier), score))
    results.sort(key=lambda r: -r.score)
    return results[:limit]


def write_other_stores(root: Path, generator: LessonGenerator, learnings: int, notes: int) -> None:
    """An ``.agents/`` of learnings and pool candidates, and Swarm2 worker and shared memory,
    written as those stores' own layouts."""
    agents = root / "project" / ".agents"
    (agents / "learnings").mkdir(parents=True)
    for number, lesson in enumerate(generator.corpus(learnings).lessons):
        (agents / "learnings" / f"2026-12-01-bench-{number}.md").write_text(
            f"---\nid: bench-{number}\ntype: learning\nutility: 0.6\n---\n"
            f"# Learning: {lesson[:60]}\n\n{lesson}\n",
            encoding="utf-8",
        )
    pending = agents / "pool" / "pending"
    pending.mkdir(parents=True)
    for number, lesson in enumerate(generator.corpus(max(1, learnings // 5)).lessons):
        candidate = {"id": f"pend-bench-{number}", "type": "solution", "content": lesson}
        (pending / f"pend-bench-{number}.json").write_text(
            json.dumps({"candidate": candidate, "status": "pending"}), encoding="utf-8"
        )
    memory = root / "profiles" / "w1" / "memory"
    memory.mkdir(parents=True)
    lines = generator.corpus(notes).lessons
    half = len(lines) // 2
    (memory / "MEMORY.md").write_text(
        "# Memory\n\n" + "".join(f"- {t}\n" for t in lines[:half]), encoding="utf-8"
    )
    (root / "shared").mkdir()
    (root / "shared" / "notes.md").write_text(
        "# Shared\n\n" + "".join(f"- {t}\n" for t in lines[half:]), encoding="utf-8"
    )


def filler(knowledge: KnowledgeStore, how: str) -> KnowledgeStore:
    """The store the background fill runs on: ``knowledge`` itself, or (``synthetic``) the
    same store with a stand-in of its model's name and dimension."""
    if how != "synthetic":
        return knowledge

    model = knowledge.embedder
    assert model is not None
    return KnowledgeStore(
        knowledge.swarm_dir,
        locks=knowledge.locks,
        config=knowledge.config,
        data_dir=knowledge.data_dir,
        project_name=knowledge.project_name,
        embedder=StandIn(model.name, model.dim),
    )


def token_counts(queries: list[QueryContext]) -> list[int]:
    """MiniLM tokens of each query's haystack (what is embedded, before the 256 cap)."""
    tokenizer = minilm_tokenizer()
    return [len(tokenizer.encode(q.haystack()).ids) for q in queries]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--recorded", type=int, default=50)
    parser.add_argument("--learnings", type=int, default=500)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--dense-model", type=DenseModel, default=DenseModel.AUTO)
    parser.add_argument("--fill", choices=["model", "synthetic"], default="model")
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    global CONFIG
    CONFIG = CONFIG.model_copy(update={"dense_model": args.dense_model})
    root = scratch_dir("knowledge-inject-", args.dir)
    try:
        generator = LessonGenerator(seed=9)
        write_tier(
            root / "project" / ".swarm" / "knowledge.jsonl",
            generator.corpus(args.entries).lessons,
            Tier.SWARM,
            1,
        )
        write_tier(
            root / "hive" / "shared-learnings.jsonl",
            generator.corpus(args.entries).lessons,
            Tier.HIVE,
            2,
        )
        knowledge = KnowledgeStore(
            root / "project" / ".swarm",
            locks=LocalLocks(root / "locks"),
            config=CONFIG,
            data_dir=root / "hive",
            project_name="bench",
        )
        lexical = knowledge.with_config(CONFIG.model_copy(update={"retrieval": Retrieval.LEXICAL}))
        queries = contexts(generator, args.queries)
        budget = budget_for(1.0, CONFIG)
        started = time.perf_counter()
        search(knowledge, queries[0])
        cold = time.perf_counter() - started
        started = time.perf_counter()
        filled = fill(filler(knowledge, args.fill), batch=4096 if args.fill == "synthetic" else 32)
        fill_s = time.perf_counter() - started
        assert filled.done, filled
        console.print(
            f"model {CONFIG.model.value}: background fill embedded "
            f"{sum(filled.embedded.values()):,} entries in {fill_s:.1f} s"
        )
        vector_bytes = 0
        embedder = knowledge.embedder
        assert embedder is not None
        for store in (knowledge.swarm, knowledge.hive):
            with store.tier_file.mirror.mutex:
                vector_bytes += dense_index(store, embedder).matrix.nbytes
        timings: list[float] = []
        lexical_timings: list[float] = []
        task_timings: list[float] = []
        task_lexical_timings: list[float] = []
        lengths = task_lengths()
        short = task_length(queries, lengths)
        profiler = cProfile.Profile() if args.profile is not None else None
        task_profiler = cProfile.Profile() if args.profile is not None else None
        cpu: dict[int, list[float]] = {id(into): [] for into in (timings, lexical_timings)}
        cpu.update({id(into): [] for into in (task_timings, task_lexical_timings)})
        for context, task in zip(queries, short, strict=True):
            for target, query, into, profile in (
                (knowledge, context, timings, profiler),
                (lexical, context, lexical_timings, None),
                (knowledge, task, task_timings, task_profiler),
                (lexical, task, task_lexical_timings, None),
            ):
                cpu_started = time.process_time()
                if profile is not None:
                    profile.enable()
                started = time.perf_counter()
                ranked = search(target, query, limit=budget.max_entries)
                _block, _ = render_directives(
                    ranked,
                    trace_id=str(uuid.uuid4()),
                    budget=budget,
                    max_display=CONFIG.max_lesson_display_chars,
                )
                into.append((time.perf_counter() - started) * 1000)
                cpu[id(into)].append((time.process_time() - cpu_started) * 1000)
                if profile is not None:
                    profile.disable()
        if profiler is not None and task_profiler is not None:
            profiler.dump_stats(args.profile)
            task_profiler.dump_stats(f"{args.profile}.task")
        alone = Stores(root / "project", knowledge)
        write_other_stores(root, generator, args.learnings, args.notes)
        every = Stores(
            root / "project",
            knowledge,
            AgentsLayout(root / "project" / ".agents"),
            MemorySearch(root / "profiles", root / "shared"),
        )
        federated_prepare(every, queries[0])  # the memory index is built once, not timed
        fused_alone: list[float] = []
        fused_every: list[float] = []
        for context in queries:
            for stores, into in ((alone, fused_alone), (every, fused_every)):
                started = time.perf_counter()
                federated_prepare(stores, context)
                into.append((time.perf_counter() - started) * 1000)
        scans = []
        for context in queries[: max(5, args.queries // 15)]:
            started = time.perf_counter()
            full_scan(knowledge, context, budget.max_entries)
            scans.append((time.perf_counter() - started) * 1000)
        recorded = []
        for context in queries[: args.recorded]:
            started = time.perf_counter()
            inject(knowledge, context)
            recorded.append((time.perf_counter() - started) * 1000)
        result = {
            "entries_per_tier": args.entries,
            "queries": args.queries,
            "cold_first_query_ms": cold * 1000,
            "dense_model": CONFIG.model.value,
            "fill": args.fill,
            "fill_s": fill_s,
            "fill_embedded": sum(filled.embedded.values()),
            "query_p50_ms": statistics.median(timings),
            "query_p99_ms": percentile(timings, 0.99),
            "lexical_query_p50_ms": statistics.median(lexical_timings),
            "lexical_query_p99_ms": percentile(lexical_timings, 0.99),
            "query_tokens_p50": statistics.median(token_counts(queries)),
            "task_query_tokens_p50": statistics.median(token_counts(short)),
            "task_query_p50_ms": statistics.median(task_timings),
            "task_query_p99_ms": percentile(task_timings, 0.99),
            "task_lexical_query_p50_ms": statistics.median(task_lexical_timings),
            "task_lexical_query_p99_ms": percentile(task_lexical_timings, 0.99),
            "query_cpu_p50_ms": statistics.median(cpu[id(timings)]),
            "lexical_query_cpu_p50_ms": statistics.median(cpu[id(lexical_timings)]),
            "task_query_cpu_p50_ms": statistics.median(cpu[id(task_timings)]),
            "task_lexical_query_cpu_p50_ms": statistics.median(cpu[id(task_lexical_timings)]),
            "load_average": Path("/proc/loadavg").read_text().split()[:3],
            "entry_vectors_mb": vector_bytes / 2**20,
            "full_scan_p50_ms": statistics.median(scans),
            "recorded_inject_p50_ms": statistics.median(recorded),
            "recorded_inject_p99_ms": percentile(recorded, 0.99),
            "federated_knowledge_only_p50_ms": statistics.median(fused_alone),
            "federated_knowledge_only_p99_ms": percentile(fused_alone, 0.99),
            "federated_every_store_p50_ms": statistics.median(fused_every),
            "federated_every_store_p99_ms": percentile(fused_every, 0.99),
            "learnings": args.learnings,
            "memory_notes": args.notes,
        }
        result["federated_alone_vs_hybrid_p50"] = (
            result["federated_knowledge_only_p50_ms"] / result["query_p50_ms"]
        )
        result["federated_every_vs_hybrid_p50"] = (
            result["federated_every_store_p50_ms"] / result["query_p50_ms"]
        )
        result["speedup_vs_full_scan"] = result["full_scan_p50_ms"] / result["query_p50_ms"]
        result["p50_vs_target_15ms"] = result["query_p50_ms"] / 15.0
        result["hybrid_vs_lexical_p50"] = result["query_p50_ms"] / result["lexical_query_p50_ms"]
        result["task_p50_vs_target_15ms"] = result["task_query_p50_ms"] / 15.0
        result["task_hybrid_vs_lexical_p50"] = (
            result["task_query_p50_ms"] / result["task_lexical_query_p50_ms"]
        )
        table(
            f"injection over {args.entries:,} swarm + {args.entries:,} hive entries (fs: {root})",
            ["measure", "p50 ms", "p99 ms"],
            [
                [
                    "query + render (hybrid, default)",
                    result["query_p50_ms"],
                    result["query_p99_ms"],
                ],
                [
                    "query + render (lexical only)",
                    result["lexical_query_p50_ms"],
                    result["lexical_query_p99_ms"],
                ],
                [
                    "task-length query + render (hybrid, default)",
                    result["task_query_p50_ms"],
                    result["task_query_p99_ms"],
                ],
                [
                    "task-length query + render (lexical only)",
                    result["task_lexical_query_p50_ms"],
                    result["task_lexical_query_p99_ms"],
                ],
                [
                    "federated, knowledge store only",
                    result["federated_knowledge_only_p50_ms"],
                    result["federated_knowledge_only_p99_ms"],
                ],
                [
                    f"federated, + {args.learnings} learnings, memory {args.notes} lines",
                    result["federated_every_store_p50_ms"],
                    result["federated_every_store_p99_ms"],
                ],
                ["full-scan ranker", result["full_scan_p50_ms"], "-"],
                [
                    "recorded inject (receipt + counters)",
                    result["recorded_inject_p50_ms"],
                    result["recorded_inject_p99_ms"],
                ],
            ],
        )
        console.print(
            f"queries of {result['query_tokens_p50']:.0f} tokens (median): p50 / 15 ms target = "
            f"{result['p50_vs_target_15ms']:.2f}; task-length queries "
            f"({result['task_query_tokens_p50']:.0f} tokens): p50 / 15 ms = "
            f"{result['task_p50_vs_target_15ms']:.2f}, hybrid / lexical "
            f"{result['task_hybrid_vs_lexical_p50']:.2f}x; load {result['load_average']}"
        )
        console.print(
            "CPU p50 (the process's, which the machine's load does not stretch): hybrid "
            f"{result['query_cpu_p50_ms']:.1f} / lexical {result['lexical_query_cpu_p50_ms']:.1f}"
            f" ms; task-length hybrid {result['task_query_cpu_p50_ms']:.1f} / lexical "
            f"{result['task_lexical_query_cpu_p50_ms']:.1f} ms"
        )
        console.print(
            f"p50 / 15 ms target = {result['p50_vs_target_15ms']:.2f}; hybrid / lexical p50 "
            f"{result['hybrid_vs_lexical_p50']:.2f}x; entry vectors "
            f"{result['entry_vectors_mb']:.1f} MB; speed-up vs full scan "
            f"{result['speedup_vs_full_scan']:.0f}x; cold first query (loads + indexes "
            f"both tiers) {result['cold_first_query_ms']:.0f} ms; federated / hybrid p50: "
            f"knowledge only {result['federated_alone_vs_hybrid_p50']:.2f}x, every store "
            f"{result['federated_every_vs_hybrid_p50']:.2f}x"
        )
        save("knowledge_inject", result)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
