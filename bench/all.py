"""Every benchmark in one run, one after another, with the machine's load stated for each.

    python -m bench.all [--only NAME ...] [--skip NAME ...] [--out bench/results/all.md]

Each benchmark already measures its own baseline in the same run and prints the ratio; this
runner adds what makes a set of figures comparable: one sitting, the load average before and
after each benchmark, the wall time, and the tail of each one's output, written to one Markdown
file (``bench/results/all.md`` by default) so ``docs/BENCHMARKS.md`` can be refreshed from it.
Sizes are the ones ``docs/BENCHMARKS.md`` quotes, except where a benchmark's default runs for
many minutes (noted per entry). A benchmark that fails is reported as failed; the run goes on.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TAIL_LINES = 40


@dataclass(frozen=True)
class Bench:
    name: str
    argv: tuple[str, ...]
    timeout: float
    note: str = ""


BENCHES: tuple[Bench, ...] = (
    Bench(
        "quota_throughput",
        ("-m", "bench.quota_throughput", "--cycles", "3000", "--rounds", "3", "--procs", "4"),
        600,
        "issue 2/16: quota gate vs raw EVALSHA",
    ),
    Bench(
        "task_overhead", ("-m", "bench.task_overhead"), 600, "issue 2: gated task vs bare Celery"
    ),
    Bench(
        "knowledge_add",
        ("-m", "bench.knowledge_add", "--redis-locks"),
        1200,
        "issues 3/15: add-with-dedup vs full scan; 8 writers vs the fsync floor",
    ),
    Bench(
        "knowledge_inject",
        ("-m", "bench.knowledge_inject"),
        900,
        "issue 3: injection query vs full-scan ranker",
    ),
    Bench(
        "missions_dispatch",
        ("bench/missions_dispatch.py", "--missions", "30"),
        600,
        "issues 4/15: submit → agent started vs a bare Celery round trip",
    ),
    Bench(
        "memory_search", ("bench/memory_search.py",), 900, "issues 4/15: memory search vs ripgrep"
    ),
    Bench(
        "cli_startup",
        ("-m", "bench.cli_startup", "--runs", "15"),
        900,
        "issue 15: swarmq --help and knowledge list vs a bare typer app",
    ),
    Bench(
        "forge_throughput",
        ("bench/forge_throughput.py", "--mb", "200", "--runs", "2"),
        1800,
        "issues 5/10: forge vs a bare JSONL parse",
    ),
    Bench("flywheel_close_loop", ("bench/flywheel_close_loop.py",), 900, "issue 5: close loop"),
    Bench("llm_jobs", ("-m", "bench.llm_jobs"), 900, "issue 6: metered LLM calls"),
    Bench(
        "consolidation_join",
        ("-m", "bench.consolidation_join", "--sizes", "5000", "20000", "100000", "--repeat", "1"),
        1800,
        "issue 7: similarity join vs naive scan (one repeat, not three)",
    ),
    Bench(
        "paraphrase_join",
        ("-m", "bench.paraphrase_join", "--sizes", "100000"),
        900,
        "issue 28: the full pass's paraphrase candidate join against the blocked one",
    ),
    Bench(
        "missions_ledger",
        ("bench/missions_ledger.py", "--history", "100000"),
        900,
        "issue 14: ledger against missions ever submitted",
    ),
    Bench(
        "metrics_scrape",
        ("bench/metrics_scrape.py",),
        900,
        "issue 29: /metrics scrape over 100k entries and 10k missions",
    ),
    Bench(
        "demo_time",
        ("-m", "bench.demo_time", "--runs", "1"),
        600,
        "issue 12: swarmq demo end to end (one run, not three)",
    ),
)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def run(bench: Bench) -> tuple[str, float, str, str, str]:
    """Run one benchmark; returns status, seconds, load before, load after, output tail."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = load()
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, *bench.argv],
            cwd=REPO,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=bench.timeout,
            check=False,
        )
        status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
        output = done.stdout
    except subprocess.TimeoutExpired as exc:
        status = f"timed out after {bench.timeout:.0f} s"
        output = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode()
    seconds = time.monotonic() - started
    tail = "\n".join(output.rstrip().splitlines()[-TAIL_LINES:])
    return status, seconds, before, load(), tail


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", default=None, help="run only these benchmarks")
    parser.add_argument("--skip", nargs="*", default=[], help="leave these out")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "all.md")
    args = parser.parse_args()
    names = {b.name for b in BENCHES}
    for name in [*(args.only or []), *args.skip]:
        if name not in names:
            parser.error(f"unknown benchmark {name!r}; known: {', '.join(sorted(names))}")
    chosen = [
        b for b in BENCHES if (args.only is None or b.name in args.only) and b.name not in args.skip
    ]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# All benchmarks, one run ({stamp}, {os.cpu_count()} CPUs)",
        "",
        "| benchmark | what | status | seconds | load before (1/5/15 min) | load after |",
        "| --- | --- | --- | ---: | --- | --- |",
    ]
    sections: list[str] = []
    for number, bench in enumerate(chosen, 1):
        print(f"[{number}/{len(chosen)}] {bench.name} (load {load()}) ...", flush=True)
        status, seconds, before, after, tail = run(bench)
        print(f"    {status} in {seconds:.0f} s", flush=True)
        lines.append(
            f"| {bench.name} | {bench.note} | {status} | {seconds:.0f} | {before} | {after} |"
        )
        sections += [
            f"## {bench.name}",
            "",
            f"`python {' '.join(bench.argv)}`: {status}, {seconds:.0f} s, load {before} → {after}",
            "",
            "```",
            tail,
            "```",
            "",
        ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join([*lines, "", *sections]), encoding="utf-8")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
