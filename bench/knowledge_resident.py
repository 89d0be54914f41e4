"""Issue 28's fresh-process bars through the swarm's resident server: ``swarmq knowledge search
--json``, ``knowledge inject --preview`` and ``knowledge recall --error … --preview`` from fresh
processes (``swarm.yaml`` present, default settings) answered by a running
``python -m swarmq.cli.served`` (what the hooks start), against the same commands computed in the
process (``SWARMQ_LOCAL=1``: today's path through the persisted index) in the same run,
interleaved query by query so both see the same load. Each command is run as the user runs it:
the console script pip writes for the tree's ``[project.scripts]`` entry point (its ``swarmq``
shim, the same five lines), under this interpreter, and timed so. A child's peak RSS cannot be
read from outside (``ru_maxrss`` counts the parent it was forked from), so each command is also
run three times through ``bench.knowledge_index``'s wrapper, which writes its own ``VmHWM`` at
exit, and the largest is reported; the server's resident and peak memory are reported apart, and
the floor of any fresh process (``python -c pass``) alongside.

``--baseline DIR``: another source tree (``git archive main | tar -x -C DIR``) whose resident
path is measured in the same run, query by query right after this tree's, with its own server
and state directory; the ratio baseline / this is printed per command.

``--venv DIR``: this side is the installation in the virtual environment ``DIR`` as its user
meets it: the ``swarmq`` console script pip wrote there and its ``python`` (for the server and
the ``python -c pass`` floor), with no ``PYTHONPATH`` and no bytecode prefix, so whatever that
environment's ``site`` loads at every start (an editable install's finder) is counted.
``--baseline`` may name such an environment too (a directory holding ``pyvenv.cfg``): a regular
install against an editable one of the same tree, in the same run.

The stores are those of ``bench.knowledge_index`` in a kept ``--root`` (written there once when
missing; its first indexed call builds the index).

    python -m bench.knowledge_resident --root DIR [--entries 100000] [--runs 15]
                                       [--fill none|synthetic] [--baseline DIR] [--no-local]
                                       [--venv DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.cli_startup import child_env
from bench.common import REPO, save, table
from bench.knowledge_index import WRAPPER, queries, roster
from bench.worker_memory import prefill, stores
from swarmq.storage.statedir import config_key

FAILURES = (
    "$ python manage.py test\nbash: python: command not found",
    "$ npm run build\nError: Cannot find module 'webpack'",
    "$ pytest tests/\nModuleNotFoundError: No module named 'yaml'",
)


PHASES = """
import sys, time
marks = [(time.perf_counter(), time.process_time())]
def mark():
    marks.append((time.perf_counter(), time.process_time()))
import typer
import swarmq.cli.root, swarmq.cli.common, swarmq.cli.knowledge
import swarmq.federated.search, swarmq.wiring.federated, swarmq.knowledge.query
mark()  # imports: typer, the CLI, the federation and the ranking (numpy among them)
from swarmq.cli.common import load, store_locks
from swarmq.roster.loader import load_roster
roster = load_roster(sys.argv[1])
mark()  # the roster
locks = store_locks(roster)
mark()  # the lock selection (a Redis connection unless single-host)
from swarmq.wiring.federated import workspace_stores
from swarmq.federated.search import ask
from swarmq.knowledge.query import QueryContext
stores = workspace_stores(roster, locks)
stores.knowledge.embedder
mark()  # the stores and the embedding model (onnxruntime, session, tokenizer)
ask(stores, QueryContext(text=sys.argv[2]), limit=10)
mark()  # the search: query embedding, both indexes opened and checked, ranking, reads
print(*(f"{1000 * (b[0] - a[0]):.1f}/{1000 * (b[1] - a[1]):.1f}"
        for a, b in zip(marks, marks[1:])))
"""
PHASE_NAMES = ("imports", "roster", "locks", "stores + model", "search")


def console_script(tree: Path, where: Path) -> Path:
    """The ``swarmq`` console script pip writes for ``tree``'s entry point, at ``where``."""
    text = (tree / "pyproject.toml").read_text(encoding="utf-8")
    scripts = text[text.index("[project.scripts]") :]
    line = next(x for x in scripts.splitlines() if x.startswith("swarmq ="))
    module, function = line.split("=", 1)[1].strip().strip('"').split(":")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"from {module} import {function}\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
        f"    sys.exit({function}())\n"
    )
    where.chmod(0o755)
    return where


class Side:
    """One installation measured: its environment, the command a user types, its interpreter."""

    def __init__(self, env: dict[str, str], script: Path, python: str) -> None:
        self.env, self.script, self.python = env, script, python


def tree_side(root: Path, tree: Path, state: str, where: Path) -> Side:
    """A source tree run through a console script written for it, under this interpreter."""
    env = {**child_env(root, tree, True), "SWARMQ_STATE": str(root / state)}
    return Side(env, console_script(tree, where), sys.executable)


def venv_side(root: Path, venv: Path, state: str) -> Side:
    """The installation in ``venv``, through the console script pip wrote there."""
    env = {**child_env(root, REPO, True), "SWARMQ_STATE": str(root / state)}
    for name in ("PYTHONPATH", "PYTHONPYCACHEPREFIX"):
        env.pop(name, None)
    script = venv / "bin" / "swarmq"
    if not script.is_file():
        raise SystemExit(f"{venv} has no bin/swarmq: not an environment swarmq is installed in")
    return Side(env, script, str(venv / "bin" / "python"))


def child(root: Path, env: dict[str, str], args: list[str]) -> tuple[float, float]:
    """Wall ms and CPU ms of one fresh process running ``args``."""
    started = time.perf_counter()
    process = subprocess.Popen(
        args, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, code, usage = os.wait4(process.pid, 0)
    wall = 1000 * (time.perf_counter() - started)
    process.returncode = os.waitstatus_to_exitcode(code)
    process.stderr.close()
    cpu = 1000 * (usage.ru_utime + usage.ru_stime)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(args[-6:])} failed: {stderr.decode()[-2000:]}")
    return wall, cpu


def peak_rss(root: Path, side: Side, args: list[str]) -> float:
    """Peak RSS (MB) of one fresh process running the CLI with ``args``, as it writes it."""
    peak = root / "peak.kb"
    peak.unlink(missing_ok=True)
    child(root, side.env, [side.python, str(root / "peak.py"), str(peak), *args])
    return int(peak.read_text()) / 1024


def status(pid: int) -> dict[str, float]:
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle)
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}


def start_server(root: Path, side: Side, config: Path, name: str) -> subprocess.Popen[bytes]:
    """A resident server for ``config`` on ``side`` (its own state directory), listening."""
    env = side.env
    state = Path(env["SWARMQ_STATE"]) / "hooks" / config_key(config)  # swarm_state_dir there
    (state / "server.sock").unlink(missing_ok=True)  # a terminated server's, not answering
    log = (root / f"server-{name}.log").open("ab")
    started = time.perf_counter()
    server = subprocess.Popen(
        [side.python, "-P", "-m", "swarmq.cli.served", "--config", str(config), "--idle", "3600"],
        cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    log.close()
    while not (state / "server.sock").exists():
        if server.poll() is not None or time.perf_counter() - started > 600:
            raise SystemExit(f"the {name} server did not start: see {root}/server-{name}.log")
        time.sleep(0.05)
    print(f"{name} server listening after {1000 * (time.perf_counter() - started):,.0f} ms")
    return server


def measure(
    root: Path,
    entries: int,
    runs: int,
    fill: str,
    baseline: Path | None,
    local: bool,
    venv: Path | None = None,
) -> dict[str, Any]:
    stores(root, entries)
    (root / "home").mkdir(exist_ok=True)
    (root / "peak.py").write_text(WRAPPER)
    this = (
        venv_side(root, venv, "state")
        if venv is not None
        else tree_side(root, REPO, "state", root / "bin" / "swarmq")
    )
    env = this.env
    config = roster(root, "swarm.yaml", True, "hybrid")
    local_env = {**env, "SWARMQ_LOCAL": "1"}
    filled = None
    if fill == "synthetic":  # every entry has a vector: the server's filler has nothing to do
        filled = prefill(config, "synthetic")
        print(f"filled: {filled}", flush=True)
    sides = {"": this}
    if baseline is not None:
        sides[", baseline"] = (
            venv_side(root, baseline, "state-baseline")
            if (baseline / "pyvenv.cfg").is_file()
            else tree_side(root, baseline, "state-baseline", root / "bin-baseline" / "swarmq")
        )
    floors = {side: s.python for side, s in sides.items()}
    if len(set(floors.values())) == 1:  # one interpreter: one floor
        floors = {"": this.python}
    texts = queries(runs + 1)
    commands = {
        "knowledge search --json": lambda t, i: ["knowledge", "search", "--json", t],
        "knowledge inject --preview": lambda t, i: ["knowledge", "inject", "--preview", t],
        "knowledge recall --preview": lambda t, i: [
            "knowledge",
            "recall",
            "--preview",
            "--error",
            FAILURES[i % len(FAILURES)],
        ],
    }
    first = commands["knowledge search --json"](texts[0], 0)
    for s in sides.values():  # the index is there (built once), bytecode compiled
        child(root, {**s.env, "SWARMQ_LOCAL": "1"}, [str(s.script), "-c", str(config), *first])
    servers: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for side, s in sides.items():
            servers[side] = start_server(root, s, config, side.strip(", ") or "this")
        rows: dict[str, dict[str, list[float]]] = {}
        loads: list[float] = []

        def add(label: str, sample: tuple[float, float]) -> None:
            row = rows.setdefault(label, {"wall": [], "cpu": [], "rss": []})
            for key, value in zip(("wall", "cpu"), sample, strict=True):
                row[key].append(value)

        for i, text in enumerate(texts[1:]):
            loads.append(os.getloadavg()[0])
            for side, python in floors.items():
                add(f"python -c pass{side}", child(root, sides[side].env, [python, "-c", "pass"]))
            for label, argv in commands.items():
                order = list(sides.items())
                if i % 2:  # which side goes first alternates: neither always follows the other
                    order.reverse()
                for side, s in order:
                    args = [str(s.script), "-c", str(config), *argv(text, i)]
                    add(f"{label} (resident{side})", child(root, s.env, args))
                if local:
                    args = [str(this.script), "-c", str(config), *argv(text, i)]
                    add(f"{label} (in process)", child(root, local_env, args))
        for i, text in enumerate(texts[1:4]):
            for label, argv in commands.items():
                for side, s in sides.items():
                    args = ["-c", str(config), *argv(text, i)]
                    rows[f"{label} (resident{side})"]["rss"].append(peak_rss(root, s, args))
                if local:
                    args = ["-c", str(config), *argv(text, i)]
                    local_side = Side(local_env, this.script, this.python)
                    rows[f"{label} (in process)"]["rss"].append(peak_rss(root, local_side, args))
        server_memory = {side: status(server.pid) for side, server in servers.items()}
        phases: list[list[tuple[float, float]]] = []
        for text in texts[1:] if local else []:
            done = subprocess.run(
                [this.python, "-c", PHASES, str(config), text], cwd=root, env=local_env,
                stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True,
            )  # fmt: skip
            pairs = [tuple(float(x) for x in p.split("/")) for p in done.stdout.split()[-5:]]
            phases.append([(w, c) for w, c in pairs])
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=60)
    summary: dict[str, dict[str, Any]] = {
        label: {
            "p50_ms": statistics.median(row["wall"]),
            "cpu_p50_ms": statistics.median(row["cpu"]),
            "max_ms": max(row["wall"]),
            "peak_rss_mb": max(row["rss"], default=float("nan")),
            "runs": len(row["wall"]),
        }
        for label, row in rows.items()
    }
    for label, row in summary.items():
        if "resident" in label and row["peak_rss_mb"] > 100:
            print(f"warning: {label}: a run computed in process ({row['peak_rss_mb']:.0f} MB)")
    for label in commands:
        ratios = {}
        if local:
            ratios["in process / resident p50"] = (
                summary[f"{label} (in process)"]["p50_ms"]
                / summary[f"{label} (resident)"]["p50_ms"]
            )
        if baseline is not None:
            ratios["baseline / this, resident p50"] = (
                summary[f"{label} (resident, baseline)"]["p50_ms"]
                / summary[f"{label} (resident)"]["p50_ms"]
            )
        summary[label + " ratio"] = ratios
    return {
        "entries": entries,
        "fill": filled,
        "baseline": str(baseline) if baseline is not None else None,
        "venv": str(venv) if venv is not None else None,
        "server_rss_mb": {
            side.strip(", ") or "this": m["VmRSS"] for side, m in server_memory.items()
        },
        "server_peak_mb": {
            side.strip(", ") or "this": m["VmHWM"] for side, m in server_memory.items()
        },
        "load_min": min(loads),
        "load_max": max(loads),
        "paths": summary,
        "phases": {
            name: {
                "wall_p50_ms": statistics.median(run[i][0] for run in phases),
                "cpu_p50_ms": statistics.median(run[i][1] for run in phases),
            }
            for i, name in enumerate(PHASE_NAMES)
        }
        if phases
        else {},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--fill", choices=["none", "synthetic"], default="none",
        help="synthetic: every entry's vector filled first by a stand-in of the model's name and "
        "dimension (bench.worker_memory), as after the server's background fill",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", type=Path, default=None,
        help="another source tree whose resident path is measured in the same run",
    )  # fmt: skip
    parser.add_argument(
        "--venv", type=Path, default=None,
        help="measure the installation in this virtual environment (its bin/swarmq and python) "
        "rather than this tree",
    )  # fmt: skip
    parser.add_argument(
        "--no-local", dest="local", action="store_false",
        help="skip the in-process rows and phases (the resident paths only)",
    )  # fmt: skip
    args = parser.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    baseline = args.baseline.resolve() if args.baseline is not None else None
    venv = args.venv.absolute() if args.venv is not None else None  # its python may be a link
    result = measure(args.root, args.entries, args.runs, args.fill, baseline, args.local, venv)
    memory = ", ".join(
        f"{side} {rss:.0f} MB (peak {result['server_peak_mb'][side]:.0f})"
        for side, rss in result["server_rss_mb"].items()
    )
    table(
        f"fresh processes over {args.entries:,} swarm + {args.entries // 10:,} hive entries, "
        f"load average {result['load_min']:.1f}-{result['load_max']:.1f}; servers resident: "
        f"{memory}",
        ["command (path)", "p50 ms", "CPU p50 ms", "max ms", "peak RSS MB", "runs"],
        [
            [
                label,
                row["p50_ms"],
                row["cpu_p50_ms"],
                row["max_ms"],
                row["peak_rss_mb"],
                row["runs"],
            ]
            for label, row in result["paths"].items()
            if "p50_ms" in row
        ],
    )
    for label, row in result["paths"].items():
        if "p50_ms" not in row:
            print(f"{label}: " + ", ".join(f"{k} {v:.2f}x" for k, v in row.items()))
    if result["phases"]:
        print("in-process search by phase, p50 wall / CPU ms:")
    for name, phase in result["phases"].items():
        print(f"  {name}: {phase['wall_p50_ms']:.1f} / {phase['cpu_p50_ms']:.1f}")
    save(f"knowledge_resident_{args.entries}", result)


if __name__ == "__main__":
    main()
