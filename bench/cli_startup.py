"""CLI start-up: ``swarmq --help`` and ``swarmq knowledge list`` on a generated store, each in
fresh processes, against ``python -c pass`` and a bare two-command typer app's ``--help`` (the
floor of any typer CLI), same run. Optionally the same commands of an older revision.

Children run with a bytecode cache (a private ``PYTHONPYCACHEPREFIX``, warmed first), as an
installed package has one; ``--no-bytecode`` compiles swarmq from source in every run (a
checkout run with ``PYTHONDONTWRITEBYTECODE``; dependencies keep their installed caches).

    python -m bench.cli_startup [--runs 15] [--entries 10000] [--big 100000] [--against REV]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, console, save, scratch_dir, table
from bench.knowledge_store import build_store
from bench.lesson_corpus import LessonGenerator

BARE_TYPER = '''import typer
app = typer.Typer()
@app.command()
def first() -> None:
    """One command."""
@app.command()
def second() -> None:
    """Another command."""
app()
'''
BARS_MS = {"swarmq --help": 300.0, "swarmq knowledge list": 500.0}
"""Issue 15's bars (the --json listing and bigger stores are reported, not barred)."""


def child_env(root: Path, source: Path, bytecode: bool) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SWARMQ_CONFIG", "REDIS_URL", "PYTHONDONTWRITEBYTECODE", "COLUMNS")
    }
    env.update(PYTHONPATH=str(source), HOME=str(root / "home"),
               XDG_CACHE_HOME=str(root / "home" / ".cache"),
               XDG_DATA_HOME=str(root / "home" / "share"))  # fmt: skip
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    else:  # dependencies from their installed caches, swarmq compiled from source each run
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def time_run(argv: list[str], cwd: Path, env: dict[str, str], cold: str | None) -> float:
    """Wall milliseconds of one fresh process; a failing run is an error, never a fast
    figure. ``cold``: a glob of cache directories removed first."""
    for directory in glob.glob(cold or ""):
        shutil.rmtree(directory)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)  # fmt: skip
    elapsed = 1000 * (time.perf_counter() - started)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def make_project(root: Path, entries: int) -> Path:
    project = root / f"project-{entries}"
    lessons = LessonGenerator(seed=6).corpus(entries, dup_rate=0.0).lessons
    build_store(project / ".swarm" / "knowledge.jsonl", lessons)
    return project


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    python = sys.executable
    (root / "home").mkdir(parents=True)
    bare = root / "bare_typer.py"
    bare.write_text(BARE_TYPER)
    projects = {n: make_project(root, n) for n in (args.entries, args.big) if n}
    sources = {"": REPO}
    cache = root / "home" / ".cache" / "swarmq"  # implicit rosters keep their runtime dir here
    if args.against:
        old = root / "against"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.against],
                                 capture_output=True, check=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        sources[f" @ {args.against}"] = old
    cases: list[tuple[str, list[str], Path, Path, str | None]] = [
        ("python -c pass", [python, "-c", "pass"], root, REPO, None),
        ("bare typer app --help", [python, str(bare), "--help"], root, REPO, None),
    ]
    for suffix, source in sources.items():
        cli = [python, "-m", "swarmq.cli"]
        cases.append((f"swarmq --help{suffix}", [*cli, "--help"], root, source, None))
        for n, project in projects.items():
            size = "" if n == args.entries else f" ({n:,} entries)"
            listing = [*cli, "knowledge", "list"]
            cases.append((f"swarmq knowledge list{size}{suffix}", listing, project, source, None))
            cases.append((f"swarmq knowledge list --json{size}{suffix}", [*listing, "--json"],
                          project, source, None))  # fmt: skip
            if not suffix:  # the first call after a change: no listing index yet
                cases.append((f"swarmq knowledge list --json{size}, index rebuilt",
                              [*listing, "--json"], project, source,
                              str(cache / f"{project.name}-*" / "listing")))  # fmt: skip
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {label: [] for label, *_ in cases}
    # Round robin, after one warm-up round: load from other work hits every command alike.
    for round_no in range(args.runs + 1):
        for label, argv, cwd, source, cold in cases:
            if "entries" in label and round_no > max(3, args.runs // 3):
                continue  # the big store: fewer runs
            env = child_env(root, source, not args.no_bytecode)
            elapsed = time_run(argv, cwd, env, cold)
            if round_no:
                times[label].append(elapsed)
    results = {label: {"p50_ms": statistics.median(t), "min_ms": min(t), "runs": len(t)}
               for label, t in times.items()}  # fmt: skip
    return {"entries": args.entries, "big": args.big, "bytecode_cache": not args.no_bytecode,
            "against": args.against, "python": sys.version.split()[0], "results": results,
            "loadavg_before": load_before, "loadavg_after": os.getloadavg()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per command")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=0, help="also list a store this big (0 = skip)")
    parser.add_argument("--against", default=None, help="also time this git revision's CLI")
    parser.add_argument("--no-bytecode", action="store_true", help="compile from source each run")
    parser.add_argument("--dir", type=Path, default=None, help="scratch dir (default: temp)")
    args = parser.parse_args()
    root = scratch_dir("cli-startup-", args.dir)
    try:
        data = measure(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = data["results"]
    floor = results["python -c pass"]["p50_ms"]
    bare = results["bare typer app --help"]["p50_ms"]
    rows = []
    for label, r in results.items():
        bar = BARS_MS.get(label)
        verdict = "" if bar is None else ("ok" if r["p50_ms"] <= bar else "OVER") + f" ≤ {bar:.0f}"
        rows.append([label, r["p50_ms"], r["min_ms"], f"{r['p50_ms'] / floor:.1f}x",
                     f"{r['p50_ms'] / bare:.2f}x", verdict])  # fmt: skip
    cache = "bytecode cached" if data["bytecode_cache"] else "no bytecode cache"
    table(f"CLI start-up, fresh processes ({cache}; {args.entries:,}-entry store)",
          ["command", "p50 ms", "min ms", "× pass", "× typer", "bar"], rows)  # fmt: skip
    console.print(f"load average {data['loadavg_before'][0]:.2f} before, "
                  f"{data['loadavg_after'][0]:.2f} after ({os.cpu_count()} CPUs)")  # fmt: skip
    save("cli_startup" if data["bytecode_cache"] else "cli_startup_nocache", data)


if __name__ == "__main__":
    main()
