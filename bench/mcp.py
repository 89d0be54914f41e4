"""``swarmq mcp`` under load, from real stdio server processes driven by the SDK's client.

1. Concurrency: ``--agents`` servers (default 8, one process each, as eight agent sessions
   would start them) against one workspace under the Redis store locks, each adding ``--adds``
   distinct lessons (default 200) plus one lesson every agent adds, and after each add injecting
   a task about it and acknowledging what was shown, until ``--acks`` acknowledgements (default
   200) are committed: adds and acknowledgements of all the agents at once.
   Checked afterwards: every add reported ``added`` is on disk exactly once (the store or, past
   the default FIFO cap, its evicted sidecar), the shared lesson exists once, every reported
   acknowledgement is a terminal receipt and the live entries' counters match. Baseline, same
   run: the same adds by the same number of threads calling ``TierStore.add`` in one process.
2. ``knowledge_search`` p50 over a ``--entries`` (default 10k) store from a running server (a
   full MCP round trip: client → stdio → tool → JSON back), against the in-process ``search``
   call on the same store, same queries.

    python -m bench.mcp [--agents 8] [--adds 200] [--acks 200] [--entries 10000] [--queries 300]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import string
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from bench.common import BENCH_REDIS_URL, console, save, scratch_swarm, table
from bench.lesson_corpus import LessonGenerator
from swarmq.coord.cluster import Cluster
from swarmq.knowledge.inject import ledger
from swarmq.knowledge.model import Entry, Tier
from swarmq.knowledge.query import QueryContext, search
from swarmq.knowledge.reinforcement import NewLesson, new_entry
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.storage.clock import iso
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.knowledge import knowledge_store

SHARED = "Every agent agrees: check the celery visibility timeout before raising task time limits"


def write_roster(directory: Path, swarm: str, redis_url: str) -> Path:
    """A roster whose every root lives in ``directory`` (Redis store locks)."""
    data = {
        "swarm": swarm,
        "workspace": str(directory / "project"),
        "paths": {
            name: str(directory / name) for name in ("profiles", "runtime", "shared", "hive")
        },
        "redis_url": redis_url,
        "workers": [{"id": f"a{i}", "role": "builder", "queues": ["missions"]} for i in range(8)],
    }
    (directory / "project" / ".swarm").mkdir(parents=True, exist_ok=True)
    path = directory / "swarm.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def server_params(roster_file: Path, worker: str, session: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmq.cli", "-c", str(roster_file), "mcp"],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(Path.home()),
            "SWARMQ_WORKER_ID": worker,
            "SWARMQ_ASSIGNMENT_ID": session,
        },
    )


def _words(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(count)]


def lesson_text(agent: int, number: int) -> str:
    """A distinct, valid lesson (random words: no two are near-duplicates)."""
    w = _words(random.Random(agent * 1_000_003 + number), 6)
    return f"Always check {w[0]} {w[1]} before calling {w[2]} {w[3]} in the {w[4]} {w[5]} module"


def task_text(agent: int, number: int) -> str:
    w = _words(random.Random(agent * 1_000_003 + number), 6)
    return f"call {w[2]} {w[3]} from the {w[4]} {w[5]} module"


def payload(result: CallToolResult) -> Any:
    if result.is_error:
        raise RuntimeError(" ".join(getattr(c, "text", "") for c in result.content))
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


@dataclass
class AgentReport:
    added: list[str] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    acks: list[tuple[str, str]] = field(default_factory=list)
    injects: int = 0


@dataclass
class Barrier:
    """Released when every server has started and listed its tools: the work starts at once."""

    parties: int
    arrived: int = 0
    released: anyio.Event = field(default_factory=anyio.Event)

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived == self.parties:
            self.released.set()
        await self.released.wait()


async def run_agent(
    roster_file: Path, agent: int, adds: int, acks: int, start: Barrier
) -> AgentReport:
    report = AgentReport()
    async with Client(server_params(roster_file, f"a{agent}", f"s{agent}")) as client:
        await client.list_tools()
        await start.wait()
        for number in range(adds):
            if number == adds // 2:
                shared = payload(await client.call_tool("knowledge_add", {"lesson": SHARED}))
                report.outcomes[f"shared:{shared['outcome']}"] += 1
                if shared["outcome"] == "added":
                    report.added.append(shared["id"])
            done = payload(
                await client.call_tool("knowledge_add", {"lesson": lesson_text(agent, number)})
            )
            report.outcomes[done["outcome"]] += 1
            if done["outcome"] == "added":
                report.added.append(done["id"])
            if len(report.acks) < acks:  # acknowledge while the others still add
                await inject_and_ack(client, report, task_text(agent, number), acks)
        # Tasks about its latest lessons: past the default FIFO cap (100 entries) the earlier
        # ones are in the evicted sidecar, where nothing is injected from.
        recent = min(adds, 10)
        number = 0
        while len(report.acks) < acks and report.injects < acks * 3:
            task = task_text(agent, adds - 1 - number % max(recent, 1))
            number += 1
            await inject_and_ack(client, report, task, acks)
    return report


async def inject_and_ack(client: Client, report: AgentReport, task: str, acks: int) -> None:
    """Inject ``task`` and acknowledge every entry shown, up to ``acks`` in all."""
    shown = payload(await client.call_tool("knowledge_inject", {"task": task}))
    report.injects += 1
    for entry in shown["entries"]:
        if len(report.acks) >= acks:
            return
        ack = payload(
            await client.call_tool(
                "knowledge_ack",
                {"trace_id": shown["trace_id"], "entry_id": entry["id"], "verdict": "applied"},
            )
        )
        if ack["status"] == "committed":
            report.acks.append((shown["trace_id"], entry["id"]))


async def run_agents(roster_file: Path, agents: int, adds: int, acks: int) -> list[AgentReport]:
    """Start every server first (they import and connect), then release all of them at once."""
    reports: list[AgentReport | None] = [None] * agents
    start = Barrier(agents)

    async def one(index: int) -> None:
        reports[index] = await run_agent(roster_file, index, adds, acks, start)

    async with anyio.create_task_group() as group:
        for index in range(agents):
            group.start_soon(one, index)
    return [r for r in reports if r is not None]


def verify(roster: Roster, reports: list[AgentReport]) -> list[str]:
    """Every reported add on disk exactly once; every reported ack a receipt and a count."""
    problems: list[str] = []
    files = knowledge_store(roster, LocalLocks(roster.runtime_dir / "verify-locks")).swarm.files
    live = [json.loads(x) for x in files.knowledge.read_text().splitlines() if x.strip()]
    evicted = []
    if files.evicted.exists():
        evicted = [json.loads(x) for x in files.evicted.read_text().splitlines() if x.strip()]
    on_disk = Counter([e["id"] for e in live] + [e["id"] for e in evicted])
    reported = Counter(i for r in reports for i in r.added)
    for entry_id, times in reported.items():
        if times != 1:
            problems.append(f"add {entry_id} reported {times} times")
        if on_disk[entry_id] != 1:
            problems.append(f"reported add {entry_id} is on disk {on_disk[entry_id]} times")
    unreported = set(on_disk) - set(reported)
    if unreported:
        problems.append(f"{len(unreported)} entries on disk that no add reported")
    shared = [e for e in live if e["lesson"] == SHARED] + [
        e for e in evicted if SHARED in e.get("line", "")
    ]
    shared_adds = sum(r.outcomes["shared:added"] for r in reports)
    if len(shared) != shared_adds or sum(1 for e in live if e["lesson"] == SHARED) > 1:
        # More than one "added" only after the FIFO cap evicted the earlier copy.
        problems.append(f"the shared lesson is on disk {len(shared)} times, added {shared_adds}")
    store = knowledge_store(roster, LocalLocks(roster.runtime_dir / "verify-locks"))
    terminals = ledger(store).verify().terminals
    acked = Counter(entry for r in reports for _, entry in r.acks)
    for r in reports:
        for trace, entry_id in r.acks:
            if terminals.get((trace, entry_id)) != "applied":
                problems.append(f"ack {trace}:{entry_id} reported but not in the receipts")
    for e in live:
        counted = int(Entry(e).outcomes.get("acknowledged_count", 0) or 0)
        if counted != acked[e["id"]]:
            problems.append(f"entry {e['id']}: {counted} acks counted, {acked[e['id']]} reported")
    return problems


def baseline_adds(roster: Roster, agents: int, adds: int) -> float:
    """The same adds by ``agents`` threads calling ``TierStore.add`` in one process (seconds)."""
    cluster = Cluster.connect(roster.cluster_config())
    store = knowledge_store(roster, cluster.locks)

    def work(agent: int) -> None:
        for number in range(adds):
            store.swarm.add(NewLesson(lesson_text(agent + 100, number)))

    threads = [threading.Thread(target=work, args=(a,)) for a in range(agents)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def concurrency(root: Path, swarm: str, agents: int, adds: int, acks: int) -> dict[str, Any]:
    roster_file = write_roster(root / "mcp", swarm, BENCH_REDIS_URL)
    roster = load_roster(roster_file)
    started = time.perf_counter()
    reports = anyio.run(run_agents, roster_file, agents, adds, acks)
    seconds = time.perf_counter() - started
    problems = verify(roster, reports)
    base_roster = load_roster(write_roster(root / "base", swarm + "b", BENCH_REDIS_URL))
    base = baseline_adds(base_roster, agents, adds)
    outcomes: Counter[str] = Counter()
    for r in reports:
        outcomes.update(r.outcomes)
    return {
        "agents": agents,
        "adds_each": adds,
        "acks_each": acks,
        "seconds": seconds,
        "added": sum(len(r.added) for r in reports),
        "acks": sum(len(r.acks) for r in reports),
        "injects": sum(r.injects for r in reports),
        "outcomes": dict(outcomes),
        "problems": problems,
        "baseline_in_process_add_seconds": base,
    }


def search_latency(root: Path, swarm: str, entries: int, queries: int) -> dict[str, Any]:
    roster_file = write_roster(root / "search", swarm + "s", BENCH_REDIS_URL)
    roster = load_roster(roster_file)
    generator = LessonGenerator(seed=9)
    at = iso()
    lines = [
        new_entry(
            NewLesson(text or "(empty lesson)"),
            tier=Tier.SWARM,
            project_name="bench",
            phase=1,
            at=at,
            config=roster.knowledge,
        ).line()
        for text in generator.corpus(entries).lessons
    ]
    (roster.swarm_dir / "knowledge.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = [" ".join(generator.lesson().split()[:8]) for _ in range(queries)]

    store = knowledge_store(roster, LocalLocks(roster.runtime_dir / "bench-locks"))
    search(store, QueryContext(text="warm up"), limit=5)
    inproc = []
    for text in texts:
        t0 = time.perf_counter()
        search(store, QueryContext(text=text), limit=5)
        inproc.append((time.perf_counter() - t0) * 1000)

    async def over_mcp() -> list[float]:
        out = []
        async with Client(server_params(roster_file, "a0", "search")) as client:
            await client.call_tool("knowledge_search", {"query": "warm up"})
            for text in texts:
                t0 = time.perf_counter()
                payload(await client.call_tool("knowledge_search", {"query": text, "limit": 5}))
                out.append((time.perf_counter() - t0) * 1000)
        return out

    served = anyio.run(over_mcp)
    return {
        "entries": entries,
        "queries": queries,
        "mcp_p50_ms": statistics.median(served),
        "mcp_p99_ms": sorted(served)[int(0.99 * (len(served) - 1))],
        "in_process_p50_ms": statistics.median(inproc),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--acks", type=int, default=200)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--skip-concurrency", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    result: dict[str, Any] = {}
    try:
        with scratch_swarm() as swarm:
            if not args.skip_concurrency:
                c = concurrency(root, swarm, args.agents, args.adds, args.acks)
                result["concurrency"] = c
                total = c["added"]
                table(
                    f"{args.agents} stdio servers, {args.adds} adds + {args.acks} acks each",
                    ["what", "value"],
                    [
                        ["adds reported added (all on disk once)", total],
                        ["acks committed", c["acks"]],
                        ["problems", len(c["problems"])],
                        ["seconds (MCP, 8 processes)", c["seconds"]],
                        [
                            "calls/s over MCP (add + inject + ack)",
                            (total + c["injects"] + c["acks"]) / c["seconds"],
                        ],
                        ["adds/s over MCP (with the acks' work)", total / c["seconds"]],
                        [
                            "adds/s in-process threads (baseline)",
                            args.agents * args.adds / c["baseline_in_process_add_seconds"],
                        ],
                    ],
                )
                for problem in c["problems"][:20]:
                    console.print(f"[red]{problem}[/]")
            s = search_latency(root, swarm, args.entries, args.queries)
            result["search"] = s
            table(
                f"knowledge_search over {args.entries:,} entries",
                ["what", "ms"],
                [
                    ["p50 over MCP (stdio round trip)", s["mcp_p50_ms"]],
                    ["p99 over MCP", s["mcp_p99_ms"]],
                    ["p50 in-process search (baseline)", s["in_process_p50_ms"]],
                ],
            )
            console.print(
                f"ratio MCP / in-process p50: {s['mcp_p50_ms'] / s['in_process_p50_ms']:.1f}x; "
                f"target p50 ≤ 20 ms: {'met' if s['mcp_p50_ms'] <= 20 else 'NOT met'}"
            )
        save("mcp", result)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
