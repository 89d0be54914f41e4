"""Memory search over 10k generated Markdown files: p50 latency vs ripgrep on the same files.

    python bench/memory_search.py [--files 10000] [--queries 40]

swarmq's figure is a query through `MemorySearch` from a NEW process (the persistent SQLite FTS5
index, brought up to date from the writers' change journals: no file is re-read or re-stated),
ranked, with snippets; ripgrep gets the same phrase queries (`rg -i -F -n`). Also printed: the
cold index build, the in-process warm query, and a query right after a file changed through
swarmq's writer.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swarmq.profiles.search import MemorySearch, Scope
from swarmq.storage.atomic import write_atomic

WORDS = [
    "parser",
    "lexer",
    "token",
    "queue",
    "worker",
    "mission",
    "handoff",
    "episode",
    "summary",
    "redis",
    "celery",
    "lock",
    "lease",
    "fence",
    "quota",
    "window",
    "budget",
    "recall",
    "snippet",
    "ranking",
    "index",
    "phrase",
    "overlap",
    "recency",
    "archive",
    "shared",
    "profile",
    "identity",
    "soul",
    "memory",
    "checkpoint",
    "resume",
    "blocked",
    "review",
    "complete",
    "failed",
    "cancelled",
    "agent",
    "transcript",
    "forge",
    "extract",
    "knowledge",
    "directive",
    "pool",
    "tier",
    "gold",
    "silver",
    "bronze",
    "maturity",
    "hive",
]


def vocabulary(rng: random.Random, size: int = 5000) -> tuple[list[str], list[float]]:
    """Pseudo-words with Zipf-like frequencies, as in real notes (a few words are everywhere)."""
    syllables = ["ka", "lo", "mi", "ne", "ra", "tu", "se", "vo", "di", "pa", "zu", "re", "to", "li"]
    words = sorted(
        {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size)}
    )
    return words + WORDS, [1.0 / (rank + 1) for rank in range(len(words))] + [0.003] * len(WORDS)


def generate(root: Path, files: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    phrases = [" ".join(rng.sample(WORDS, 3)) for _ in range(200)]
    for n in range(files):
        worker = f"w{n % 10}"
        directory = (
            root
            / "profiles"
            / worker
            / "memory"
            / ("episodes" if n % 3 else "missions")
            / f"m{n % 97}"
        )
        directory.mkdir(parents=True, exist_ok=True)
        lines = [f"# Episodes — {worker} — note {n}", ""]
        for _ in range(30):
            lines.append("- " + " ".join(rng.choices(words, weights, k=8)))
        if n % 50 == 0:
            lines.append(f"- Summary: {rng.choice(phrases)} {rng.choice(phrases)}")
        (directory / f"{n}.md").write_text("\n".join(lines) + "\n")
    (root / "shared").mkdir(exist_ok=True)
    return phrases


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


CHILD = """
import statistics, sys, time
from pathlib import Path
t0 = time.perf_counter()
from swarmq.storage.atomic import write_atomic
from swarmq.profiles.search import MemorySearch, Scope
root = Path(sys.argv[1]); queries = sys.argv[2:]
started = time.perf_counter()
search = MemorySearch(root / "profiles", root / "shared")
first = search.search(queries[0], scope=Scope.ALL, limit=10, budget_chars=7000)
first_ms = (time.perf_counter() - started) * 1000
times = []
for q in queries:
    s0 = time.perf_counter()
    search.search(q, scope=Scope.ALL, limit=10, budget_chars=7000)
    times.append((time.perf_counter() - s0) * 1000)
print(first_ms, statistics.median(times), (started - t0) * 1000)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    rg = shutil.which("rg")
    repo = str(Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        phrases = generate(root, args.files)
        queries = random.Random(3).sample(phrases, args.queries)
        search = MemorySearch(root / "profiles", root / "shared")
        started = time.perf_counter()
        search.index.refresh()
        build = time.perf_counter() - started
        ours: list[float] = []
        hits = 0
        for query in queries:
            started = time.perf_counter()
            result = search.search(query, scope=Scope.ALL, limit=10, budget_chars=7000)
            ours.append(time.perf_counter() - started)
            hits += len(result.hits)
        fresh_first: list[float] = []
        fresh_p50: list[float] = []
        for _ in range(5):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(root), *queries],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": repo},
            ).stdout.split()
            fresh_first.append(float(out[0]))
            fresh_p50.append(float(out[1]))
        changed = next((root / "profiles").rglob("*.md"))
        write_atomic(changed, changed.read_text() + "\n- freshly written quokka line\n")
        started = time.perf_counter()
        fresh = search.search("freshly written quokka", scope=Scope.ALL)
        after_change = time.perf_counter() - started
        assert fresh.hits and fresh.hits[0].phrase, "the changed file must be found"
        theirs: list[float] = []
        if rg:
            for query in queries:
                started = time.perf_counter()
                subprocess.run(
                    [rg, "-i", "-F", "-n", "--no-heading", query, str(root)],
                    stdout=subprocess.DEVNULL,
                    check=False,
                )
                theirs.append(time.perf_counter() - started)
    p50 = statistics.median(ours) * 1000
    new_p50 = statistics.median(fresh_p50)
    print(f"load: {os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} cores)")
    print(
        f"corpus: {args.files} Markdown files, {args.queries} phrase queries, {hits} hits returned"
    )
    print(f"swarmq index build (cold, once): {build * 1000:.0f} ms")
    print(
        f"swarmq query from a new process: first {statistics.median(fresh_first):.1f} ms"
        f" (open + journal check + query), then p50 {new_p50:.2f} ms"
    )
    print(
        f"swarmq warm query in one process: p50 {p50:.2f} ms, p99 {pct(ours, 0.99) * 1000:.2f} ms"
    )
    print(f"swarmq query right after a file changed (journaled): {after_change * 1000:.1f} ms")
    if theirs:
        rg50 = statistics.median(theirs) * 1000
        print(f"ripgrep (rg -i -F -n): p50 {rg50:.1f} ms, p99 {pct(theirs, 0.99) * 1000:.1f} ms")
        print(
            f"ratio ripgrep/swarmq p50 (new process, first query): {rg50 / statistics.median(fresh_first):.1f}x"
        )
        print(f"ratio ripgrep/swarmq p50 (new process, warm): {rg50 / new_p50:.1f}x")
    else:
        print("ripgrep not installed: no baseline (apt-get install ripgrep)")


if __name__ == "__main__":
    main()
