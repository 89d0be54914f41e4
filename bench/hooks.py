"""Agent hooks (issue 30): each hook handler from a fresh process, the way Claude Code and Codex
run it, with a ``swarm.yaml`` present, on 10k- and 100k-entry stores, against a bare typer
app's ``--help`` and ``python -c pass`` in the same run.

Each case is ``swarmq-hook claude-code`` (or ``codex``) with the event's JSON on stdin, in the
project directory. The context hooks ask the swarm's hook server (started by the first hook,
warm from then on); its start (roster, store, indexes) is timed once per store and reported
apart. The Stop hook writes its spool record (fsync'd) and pokes the server. The roster's Redis
is deliberately unreachable: a hook must not wait on it (spooled work leaves when it is back).

``--fill`` first embeds every entry's vector (``swarmq.knowledge.vectors.fill``, what the hook
server's own filler does in the background under a slow model such as MiniLM, the default where
installed), so the hooks are timed against a store in its steady state rather than while the
server is still filling.

    python -m bench.hooks [--runs 40] [--entries 10000] [--big 100000] [--fill]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common import console, save, scratch_dir, table
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
FAILURE_LESSON = (
    "`python manage.py migrate` failed (zsh: command not found: python); python is python3 on "
    "this machine: run `python3 manage.py migrate`."
)
"""One real-shaped tool-error lesson in each store, so the failure hook has something to recall."""
BIG_BAR_MS = 1000.0
"""Issue 30: p95 ≤ a bare typer --help at 10k entries, ≤ 1 s at 100k."""


def child_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "REDIS_URL")}
    env.update(
        SWARMQ_STATE=str(root / "state"),
        HOME=str(root / "home"),
        PYTHONPYCACHEPREFIX=str(root / "pycache"),
        SWARMQ_HOOK_WAIT="120",  # the start case waits for the warm-up it reports
    )
    return env


def make_project(root: Path, entries: int, lessons: list[str]) -> Path:
    base = root / f"swarm-{entries}"
    project = base / "project"
    build_store(project / ".swarm" / "knowledge.jsonl", lessons[:entries])
    roster = {
        "swarm": f"bench-hooks-{entries}",
        "workspace": str(project),
        "locks": "single-host",
        # Without a cap: the default (100, opencode-swarm's) would evict the store down to 100
        # entries at the first recorded injection, and nothing would be measured at 10k / 100k.
        "knowledge": {"swarm_max_entries": None},
        "paths": {name: str(base / name) for name in ("profiles", "runtime", "shared", "hive")},
        "redis_url": "redis://127.0.0.1:9/0",  # nothing listens: hooks must not wait on Redis
        "workers": [{"id": "w1", "role": "builder", "queues": ["forge"]}],
    }
    (base / "swarm.yaml").write_text(yaml.safe_dump(roster, sort_keys=False), encoding="utf-8")
    return project


def prefill(config: Path) -> float:
    """Embed every entry's vector into the store's persisted index; seconds taken."""
    from swarmq.knowledge.vectors import fill
    from swarmq.roster.loader import load_roster
    from swarmq.storage.locking import LocalLocks
    from swarmq.wiring.knowledge import knowledge_store

    roster = load_roster(config)
    started = time.perf_counter()
    report = fill(knowledge_store(roster, LocalLocks(roster.runtime_dir / "bench-locks")))
    assert report.done, report
    return time.perf_counter() - started


def payloads(project: Path, prompt: str, failing: str) -> dict[str, tuple[str, dict[str, Any]]]:
    transcript = project / "session.jsonl"
    transcript.write_text('{"type":"user","sessionId":"b","message":{"content":"hi"}}\n')
    base = {"session_id": "bench", "transcript_path": str(transcript), "cwd": str(project)}
    return {
        "SessionStart": ("claude-code", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        "UserPromptSubmit": ("claude-code", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}),
        "PostToolUseFailure": ("claude-code", {**base, "hook_event_name": "PostToolUseFailure",
                               "tool_name": "Bash", "tool_input": {"command": failing},
                               "error": "Exit code 127\nzsh: command not found: python",
                               "is_interrupt": False}),
        "Stop": ("claude-code", {**base, "hook_event_name": "Stop", "stop_hook_active": False}),
        "Codex PostToolUse (succeeded)": ("codex", {**base, "turn_id": "t", "hook_event_name": "PostToolUse",
                                          "tool_name": "Bash", "tool_input": {"command": "ls"},
                                          "tool_response": "Exit code: 0\nOutput:\nREADME.md"}),
    }  # fmt: skip


def time_hook(
    hook: str, agent: str, payload: dict[str, Any], cwd: Path, env: dict[str, str]
) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([hook, agent], input=json.dumps(payload).encode(), cwd=cwd, env=env,
                          capture_output=True, check=False)  # fmt: skip
    elapsed = 1000 * (time.perf_counter() - started)
    if done.returncode != 0:
        raise SystemExit(f"hook exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed, done.stdout.decode()


def time_cmd(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    return 1000 * (time.perf_counter() - started)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def stop_servers(root: Path, env: dict[str, str]) -> None:
    for log in (root / "state").glob("hooks/*/hooks.log"):
        for line in log.read_text().splitlines():
            if "listening on" in line and "pid=" in line:
                pid = int(line.split("pid=")[1].split()[0])
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    env = child_env(root)
    (root / "home").mkdir(parents=True)
    hook = str(Path(sys.executable).parent / "swarmq-hook")
    bare = root / "bare_typer.py"
    bare.write_text(BARE_TYPER)
    sizes = [n for n in (args.entries, args.big) if n]
    lessons = [FAILURE_LESSON, *LessonGenerator(seed=30).corpus(max(sizes), dup_rate=0.0).lessons]
    prompt = " ".join(lessons[18].split()[1:4])  # words of a stored lesson: something is relevant
    projects = {n: make_project(root, n, lessons) for n in sizes}
    filled: dict[int, float] = {}
    for n, project in projects.items() if args.fill else ():
        filled[n] = prefill(project.parent / "swarm.yaml")
    cases = {n: payloads(p, prompt, "python manage.py migrate") for n, p in projects.items()}
    starts: dict[int, float] = {}
    for n, project in projects.items():  # the first hook starts the server and waits for it
        agent, payload = cases[n]["SessionStart"]
        starts[n], _ = time_hook(hook, agent, payload, project, env)
    times: dict[str, list[float]] = {"python -c pass": [], "bare typer app --help": []}
    silent: dict[str, bool] = {}
    for round_no in range(args.runs + 1):
        for label, argv in (("python -c pass", [sys.executable, "-c", "pass"]),
                            ("bare typer app --help", [sys.executable, str(bare), "--help"])):  # fmt: skip
            elapsed = time_cmd(argv, root, env)
            if round_no:
                times[label].append(elapsed)
        for n, project in projects.items():
            for event, (agent, payload) in cases[n].items():
                label = f"{event} ({n:,})"
                elapsed, out = time_hook(hook, agent, payload, project, env)
                silent[label] = silent.get(label, True) and not out.strip()
                if round_no:
                    times.setdefault(label, []).append(elapsed)
    for n, project in projects.items():  # the figures are for stores of this size, or nothing
        kept = sum(1 for _ in (project / ".swarm" / "knowledge.jsonl").open())
        if kept < n:
            raise SystemExit(f"the {n:,}-entry store holds {kept:,} entries after the run")
    results = {label: {"p50_ms": statistics.median(t), "p95_ms": p95(t), "runs": len(t),
                       "silent": silent.get(label)} for label, t in times.items()}  # fmt: skip
    return {"entries": args.entries, "big": args.big, "server_start_ms": starts, "fill_s": filled,
            "results": results, "python": sys.version.split()[0],
            "loadavg": os.getloadavg()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40, help="fresh processes per case")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None, help="scratch dir (default: temp)")
    parser.add_argument("--fill", action="store_true", help="embed every entry's vector first")
    args = parser.parse_args()
    root = scratch_dir("bench-hooks-", args.dir)
    try:
        data = measure(args, root)
    finally:
        stop_servers(root, child_env(root))
        shutil.rmtree(root, ignore_errors=True)
    results = data["results"]
    bare = results["bare typer app --help"]["p95_ms"]
    rows = []
    for label, r in results.items():
        verdict = ""
        if label.endswith(f"({args.entries:,})"):
            verdict = ("ok" if r["p95_ms"] <= bare else "OVER") + " ≤ typer --help p95"
        elif args.big and label.endswith(f"({args.big:,})"):
            verdict = ("ok" if r["p95_ms"] <= BIG_BAR_MS else "OVER") + " ≤ 1000 ms"
        silent = "" if r["silent"] is None else ("silent" if r["silent"] else "context")
        rows.append(
            [label, r["p50_ms"], r["p95_ms"], f"{r['p95_ms'] / bare:.2f}x", silent, verdict]
        )
    table("Hook handlers from a fresh process (server warm)",
          ["case", "p50 ms", "p95 ms", "× typer p95", "output", "bar"], rows)  # fmt: skip
    for n, ms in data["server_start_ms"].items():
        console.print(
            f"first hook with no server ({n:,} entries): {ms:,.0f} ms (server start + warm-up)"
        )
    console.print(f"load average {data['loadavg'][0]:.2f} ({os.cpu_count()} CPUs)")
    save("hooks", data)


if __name__ == "__main__":
    main()
