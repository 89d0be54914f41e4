"""Issue 6: what metering costs per LLM call, and how fast enrichment merges into a big store.

Run: python -m bench.llm_jobs [--calls 200] [--entries 4000] [--naive 1000]

1. Metered call overhead. The same local chat-completions server (tests/llm_server.py, a thread
   of this process) answers N calls through the bare provider (baseline: one httpx round trip)
   and through ``MeteredCompleter`` (quota reserve + start on the real Redis gate, the trace hook,
   one fsynced ledger line), then with the Redis rate limiter added. p50 per call and the ratio.
2. Enrichment merge. The deterministic fallback enriches every entry of a store of plain-prose
   entries; the merge is one compare-and-swap transaction per 500 entries. Baseline, same run: the
   naive per-entry ``update(expected_revision=…)`` (one store rewrite per entry), measured on a
   smaller store and compared per entry.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import redis

from bench.common import BENCH_REDIS_URL, save, scratch_swarm, table
from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_types import QuotaError
from swarmq.coord.ratelimit import RequestRateLimiter
from swarmq.curation.enrich import Enricher
from swarmq.curation.fallback import deterministic_directives
from swarmq.curation.state import EnrichmentState
from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.store import TierStore
from swarmq.llm.ledger import LLMLedger
from swarmq.llm.metered import MeteredCompleter, RetryPolicy
from swarmq.llm.openai_compat import OpenAICompatible
from swarmq.storage.locking import LocalLocks
from tests.llm_server import running_llm_server

MESSAGES = [{"role": "user", "content": "Summarise: run the migration check before merging."}]
VERBS = ("Always run", "Never skip", "Prefer", "Check", "Avoid editing", "Use")
THINGS = (
    "the migration check",
    "generated lockfiles",
    "small pull requests",
    "the lint config",
    "the release notes",
    "integration tests",
    "schema changes",
    "the cache layer",
)


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def metered_overhead(calls: int) -> dict[str, float]:
    with (
        running_llm_server(lambda body: '{"ok": true}') as server,
        scratch_swarm() as swarm,
        tempfile.TemporaryDirectory() as tmp,
    ):
        client = redis.Redis.from_url(BENCH_REDIS_URL)
        provider = OpenAICompatible(server.base_url, "bench-model", timeout_seconds=10)
        gate = QuotaGate(
            client,
            swarm,
            {"bench": QuotaConfig(max_calls_per_day=1_000_000)},
            mirror_dir=Path(tmp) / ".swarm",
        )
        ledger = LLMLedger(Path(tmp) / "llm-ledger.jsonl")
        limiter = RequestRateLimiter(client, swarm, provider.rate_key, 60_000_000)
        metered = MeteredCompleter(
            provider,
            quota="bench",
            gate=gate,
            ledger=ledger,
            quota_errors=(QuotaError,),
            retry=RetryPolicy(max_retries=0),
        )
        limited = MeteredCompleter(
            provider,
            quota="bench",
            gate=gate,
            ledger=ledger,
            limiter=limiter,
            quota_errors=(QuotaError,),
            retry=RetryPolicy(max_retries=0),
        )
        from swarmq.llm.provider import ChatRequest

        request = ChatRequest.of(MESSAGES)
        bare: list[float] = []
        with_gate: list[float] = []
        with_limit: list[float] = []
        for _ in range(5):  # warm connections and scripts
            provider.send(request, on_send=lambda: None)
            metered.complete(MESSAGES)
            limited.complete(MESSAGES)
        for _ in range(calls):  # interleaved, so load changes hit all three alike
            began = time.perf_counter()
            provider.send(request, on_send=lambda: None)
            bare.append(time.perf_counter() - began)
            began = time.perf_counter()
            metered.complete(MESSAGES)
            with_gate.append(time.perf_counter() - began)
            began = time.perf_counter()
            limited.complete(MESSAGES)
            with_limit.append(time.perf_counter() - began)
        gate.flush_mirror()
        provider.close()
        client.close()
    return {
        "bare_p50_ms": p50_ms(bare),
        "metered_p50_ms": p50_ms(with_gate),
        "limited_p50_ms": p50_ms(with_limit),
    }


def write_prose_store(workspace: Path, n: int) -> None:
    lines = []
    for i in range(n):
        lesson = f"{VERBS[i % len(VERBS)]} {THINGS[i % len(THINGS)]} in service {i} before merging."
        lines.append(
            json.dumps(
                {
                    "id": f"e{i}",
                    "tier": "swarm",
                    "lesson": lesson,
                    "category": "process",
                    "tags": [],
                    "scope": "global",
                    "confidence": 0.6,
                    "status": "candidate",
                    "confirmed_by": [],
                    "retrieval_outcomes": {
                        "applied_count": 0,
                        "succeeded_after_count": 0,
                        "failed_after_count": 0,
                    },
                    "schema_version": 1,
                    "created_at": "2026-05-01T10:00:00.000Z",
                    "updated_at": "2026-05-01T10:00:00.000Z",
                    "project_name": "bench",
                    "auto_generated": True,
                },
                separators=(",", ":"),
            )
        )
    (workspace / ".swarm").mkdir(parents=True)
    (workspace / ".swarm" / "knowledge.jsonl").write_text("\n".join(lines) + "\n")


def store_at(workspace: Path, n: int) -> tuple[TierStore, LocalLocks]:
    from swarmq.knowledge.config import KnowledgeConfig

    write_prose_store(workspace, n)
    config = KnowledgeConfig(swarm_max_entries=None)
    locks = LocalLocks(workspace / "locks")
    return TierStore(TierFiles.swarm(workspace / ".swarm"), locks=locks, config=config), locks


def merge_rates(entries: int, naive: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store, locks = store_at(Path(tmp) / "batched", entries)
        enricher = Enricher(
            store,
            locks,
            EnrichmentState(Path(tmp) / "state.json"),
            completer=None,
            allow_fallback=True,
            batch_size=8,
            max_batches=1,
        )
        began = time.perf_counter()
        report = enricher.run()
        batched = time.perf_counter() - began
        assert len(report.enriched) == entries, report.errors[:3]

        slow, _ = store_at(Path(tmp) / "naive", naive)
        began = time.perf_counter()
        for entry in slow.read().entries:
            slow.update(
                entry.id, deterministic_directives(entry.lesson), expected_revision=entry.revision
            )
        per_entry = time.perf_counter() - began
    return {
        "batched_entries_per_s": entries / batched,
        "naive_entries_per_s": naive / per_entry,
        "batched_seconds": batched,
        "naive_seconds": per_entry,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--entries", type=int, default=4000)
    parser.add_argument("--naive", type=int, default=1000)
    args = parser.parse_args()
    calls = metered_overhead(args.calls)
    merge = merge_rates(args.entries, args.naive)
    table(
        f"metered LLM call, {args.calls} calls to a local server",
        ["path", "p50 ms", "vs bare"],
        [
            ["bare provider (httpx round trip)", calls["bare_p50_ms"], "1.00x"],
            [
                "metered: quota gate + ledger",
                calls["metered_p50_ms"],
                f"{calls['metered_p50_ms'] / calls['bare_p50_ms']:.2f}x",
            ],
            [
                "metered + Redis rate limiter",
                calls["limited_p50_ms"],
                f"{calls['limited_p50_ms'] / calls['bare_p50_ms']:.2f}x",
            ],
        ],
    )
    table(
        "enrichment merge (deterministic fallback)",
        ["path", "entries", "entries/s", "seconds"],
        [
            [
                "one CAS transaction per 500",
                args.entries,
                merge["batched_entries_per_s"],
                merge["batched_seconds"],
            ],
            [
                "naive update() per entry",
                args.naive,
                merge["naive_entries_per_s"],
                merge["naive_seconds"],
            ],
        ],
    )
    ratio = merge["batched_entries_per_s"] / merge["naive_entries_per_s"]
    print(
        f"merge ratio batched/naive: {ratio:.1f}x (naive on a {args.naive}-entry store, batched on {args.entries})"
    )
    save("llm_jobs", {"args": vars(args), **calls, **merge, "merge_ratio": ratio})


if __name__ == "__main__":
    main()
