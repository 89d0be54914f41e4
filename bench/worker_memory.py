"""Issue 28 item 3: a long-lived process's resident memory over many knowledge calls.

    python -m bench.worker_memory [--entries 10000 100000] [--calls 1000] [--root DIR]
                                  [--modes reads recorded] [--recorded-calls N]

For each size a swarm store of N :mod:`bench.lesson_corpus` lessons and a hive of N/10 (the
stores and ``swarm.yaml`` of :mod:`bench.knowledge_index`, default settings: hybrid retrieval,
persistent index) and one fresh child process per mode that loads the roster once, then makes
``--calls`` calls in turn, as a worker, the MCP server or the hook server would over a day:

* ``reads``: ``inject`` unrecorded (``prepare``, what a mission's prompt builds), ``search``,
  ``recall_error`` through the signature index (``index_dir``, as the CLI passes it);
* ``recorded``: the same calls as the MCP server makes them: ``inject`` recorded (receipt,
  ``shown_count`` + 1), ``search``, ``recall_error`` recorded, no ``index_dir``;
* ``recorded-index``: ``recorded`` with the recall through the signature index (``index_dir``),
  so that only the recording (``shown_count`` + 1 in a transaction) could load the store.

The child reads its own ``VmRSS`` (split into ``RssAnon``, the heap, and ``RssFile``, mapped
files: the index's pages when mapped) and ``VmHWM`` from ``/proc/self/status`` after the roster
load, after the first call and after 10, 100, ... calls. Each child is a fresh process: a child's
``ru_maxrss`` seen from the parent would carry the parent's own peak (fork copies it), so only
the child's own ``/proc`` figures are used. The index is built by a warm-up child first (its
build time reported), so the measured children start from a built index, as a worker does on
any day but the first.

``--fill`` embeds the stores' entry vectors into the persisted index before the measured
children start (under a slow model a query embeds only a few entries; the background fill does
the rest): ``model`` with the model itself (MiniLM: ~28 ms of CPU per entry, so about 50 min at
100k), ``synthetic`` with a stand-in of the same name and dimension that makes seeded random unit
vectors in no time (files, rows and the reader's memory are the same; only the cosines are
meaningless, which a memory figure does not look at), ``none`` (default) leaves them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.cli_startup import child_env
from bench.common import REPO, save, table
from bench.knowledge_index import queries, roster
from bench.knowledge_inject import filler, write_tier
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.model import Tier

CHILD = """
import json, sys, time
from pathlib import Path

def status():
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields

from swarmq.knowledge.inject import inject
from swarmq.knowledge.query import QueryContext, search
from swarmq.knowledge.recall import recall_error
from swarmq.roster.loader import load_roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.knowledge import knowledge_store

config, mode, calls, texts_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
texts = json.loads(Path(texts_file).read_text())
roster = load_roster(Path(config))
knowledge = knowledge_store(roster, LocalLocks(roster.runtime_dir / "bench-locks"))
recorded = mode.startswith("recorded")
index_dir = None if mode == "recorded" else roster.runtime_dir / "recall"
failures = [
    "$ pytest tests/\\nModuleNotFoundError: No module named 'pydantic'",
    "$ npm run build\\nerror TS2307: Cannot find module 'react' or its type declarations.",
    "$ docker compose up\\nError response from daemon: port is already allocated",
]
marks = {"loaded": status()}
checkpoints = {1, 10, 100, 1000, 10000}
started = time.perf_counter()
seconds = {"inject": 0.0, "search": 0.0, "recall": 0.0}
counts = {"inject": 0, "search": 0, "recall": 0}
for call in range(1, calls + 1):
    text = texts[call % len(texts)]
    kind = ("inject", "search", "recall")[call % 3]
    at = time.perf_counter()
    if kind == "inject":
        inject(knowledge, QueryContext(text=text, agent="coder"), record=recorded)
    elif kind == "search":
        search(knowledge, QueryContext(text=text), limit=10)
    else:
        recall_error(knowledge, failures[call % len(failures)] + "\\n" + text[:200],
                     record=recorded, index_dir=index_dir)
    seconds[kind] += time.perf_counter() - at
    counts[kind] += 1
    if call in checkpoints or call == calls:
        marks[str(call)] = status()
print(json.dumps({"marks": marks, "seconds": time.perf_counter() - started,
                  "mean_ms": {k: 1000 * seconds[k] / max(1, counts[k]) for k in seconds}}))
"""


def stores(root: Path, entries: int) -> None:
    """The stores of :mod:`bench.knowledge_index` (the same generator and seeds), written once."""
    swarm_file = root / "project" / ".swarm" / "knowledge.jsonl"
    if swarm_file.exists():
        return
    generator = LessonGenerator(seed=9)
    write_tier(swarm_file, generator.corpus(entries).lessons, Tier.SWARM, 1)
    write_tier(
        root / "hive" / "shared-learnings.jsonl",
        generator.corpus(max(1, entries // 10)).lessons,
        Tier.HIVE,
        2,
    )


def prefill(config: Path, how: str) -> dict[str, Any]:
    """Embed every entry's vector into the persisted indexes (``--fill``)."""
    from swarmq.knowledge.vectors import fill
    from swarmq.roster.loader import load_roster
    from swarmq.storage.locking import LocalLocks
    from swarmq.wiring.knowledge import knowledge_store

    roster = load_roster(config)
    knowledge = knowledge_store(roster, LocalLocks(roster.runtime_dir / "bench-locks"))
    model = knowledge.embedder
    assert model is not None
    knowledge = filler(knowledge, how)
    started = time.perf_counter()
    report = fill(knowledge, batch=4096)
    assert report.done, report
    return {"fill": how, "model": model.name, "fill_seconds": time.perf_counter() - started,
            "embedded": sum(report.embedded.values())}  # fmt: skip


def child(root: Path, config: Path, mode: str, calls: int, texts: Path) -> dict[str, Any]:
    env = child_env(root, REPO, True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(config), mode, str(calls), str(texts)],
        cwd=root, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{mode} child failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = time.perf_counter() - started
    return result


def measure(
    root: Path, entries: int, calls: int, modes: list[str], recorded_calls: int, how: str = "none"
) -> dict[str, Any]:
    stores(root, entries)
    (root / "home").mkdir(exist_ok=True)
    config = roster(root, "swarm.yaml", True, "hybrid")
    texts = root / "texts.json"
    texts.write_text(json.dumps(queries(50)))
    warm = child(root, config, "reads", 1, texts)  # builds the index when there is none
    out: dict[str, Any] = {"entries": entries, "warm_up_seconds": warm["wall_seconds"]}
    if how != "none":
        out["prefill"] = prefill(config, how)
        print(json.dumps(out["prefill"]), flush=True)
    for mode in modes:
        count = calls if mode == "reads" else recorded_calls or calls
        out[mode] = {"calls": count, **child(root, config, mode, count, texts)}
        print(json.dumps({"entries": entries, "mode": mode, **out[mode]}), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--modes", nargs="+", choices=["reads", "recorded", "recorded-index"],
                        default=["reads", "recorded"])  # fmt: skip
    parser.add_argument("--recorded-calls", type=int, default=0,
                        help="calls of the recorded mode (default: --calls)")  # fmt: skip
    parser.add_argument("--root", type=Path, default=None,
                        help="kept stores: <root>/<entries> written once and reused")  # fmt: skip
    parser.add_argument("--fill", choices=["none", "model", "synthetic"], default="none",
                        help="embed the entry vectors before measuring (see above)")  # fmt: skip
    args = parser.parse_args()
    results = []
    for entries in args.entries:
        if args.root is not None:
            root = args.root / str(entries)
            root.mkdir(parents=True, exist_ok=True)
            results.append(
                measure(root, entries, args.calls, args.modes, args.recorded_calls, args.fill)
            )
            continue
        root = Path(tempfile.mkdtemp(prefix=f"worker-memory{entries}-"))
        try:
            results.append(
                measure(root, entries, args.calls, args.modes, args.recorded_calls, args.fill)
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)
    rows = []
    for result in results:
        for mode in args.modes:
            marks = result[mode]["marks"]
            last = marks[str(result[mode]["calls"])]
            rows.append([
                f"{result['entries']:,}", mode, result[mode]["calls"],
                f"{marks['loaded']['VmRSS']:.0f}", f"{marks['1']['VmRSS']:.0f}",
                f"{last['VmRSS']:.0f} ({last['RssAnon']:.0f} + {last['RssFile']:.0f})",
                f"{last['VmHWM']:.0f}",
                " / ".join(f"{v:.0f}" for v in result[mode]["mean_ms"].values()),
            ])  # fmt: skip
    table(
        "one long process: resident memory over many knowledge calls (MB)",
        ["entries", "mode", "calls", "RSS loaded", "RSS after 1", "RSS at end (anon + file)",
         "peak (VmHWM)", "mean ms inject / search / recall"],
        rows,
    )  # fmt: skip
    save("worker_memory", {"results": results})


if __name__ == "__main__":
    main()
