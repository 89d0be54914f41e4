"""Issue 28: the write paths' cost with transactions through the index, against the mirror path.

    python -m bench.transaction_index [--entries 10000 100000] [--root DIR] [--calls 20]

For each size, the swarm store of :mod:`bench.worker_memory` (``<root>/<N>``, written and
indexed by that bench first) is copied, store and index, into a scratch directory before every
child, so each child starts from the same bytes with an index in step. Each child is a fresh
process that opens the store as a worker, the MCP server or the hook server does, then runs one
write path; ``mirror`` is the path before this change (``persistent_index: false``: the
transaction loads the store's mirror), ``index`` the transaction through the index:

* ``shown``: ``record_shown`` of 3 entries (a recorded injection), ``--calls`` times;
* ``commit``: one transaction that changes 1 % of the entries (a night's consolidation commit);
* ``append``: one transaction that appends one entry.

Per child: the first call's wall ms (for ``mirror`` it includes loading the store), the mean of
the later calls (``shown``), and ``VmRSS`` / ``VmHWM`` from ``/proc/self/status`` after the
calls. Both paths are measured in the same run, alternating, on the same machine load.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_startup import child_env
from bench.common import REPO, save, table
from swarmq.knowledge._ftsindex import FileIndex

CHILD = """
import json, random, sys, time
from pathlib import Path

def status():
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.inject import record_shown
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks

root, path, op, calls = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
ids = json.loads((root / "ids.json").read_text())
config = KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None,
                         persistent_index=path == "index")
knowledge = KnowledgeStore(root / "project" / ".swarm", locks=LocalLocks(root / "locks"),
                           config=config, data_dir=root / "data", project_name="bench")
swarm = knowledge.swarm
rng = random.Random(7)
marks = {"opened": status()}
times = []
if op == "shown":
    for _ in range(calls):
        at = time.perf_counter()
        record_shown(swarm, rng.sample(ids, 3))
        times.append(time.perf_counter() - at)
elif op == "commit":
    chosen = rng.sample(ids, max(1, len(ids) // 100))
    at = time.perf_counter()
    with swarm.transaction() as txn:
        for entry_id in chosen:
            entry = txn.get(entry_id)
            txn.put({**entry.data, "confidence": 0.5})
    times.append(time.perf_counter() - at)
else:
    at = time.perf_counter()
    with swarm.transaction() as txn:
        entry = txn.get(ids[0])
        txn.append({**entry.data, "id": "bench-appended"})
    times.append(time.perf_counter() - at)
marks["end"] = status()
print(json.dumps({"ms": [1000 * t for t in times], "marks": marks,
                  "loaded": swarm.tier_file.mirror.state is not None}))
"""


def prepare(source: Path, scratch: Path) -> None:
    """A copy of the kept store and its index (the index in step with the store)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    target = scratch / "project" / ".swarm"
    target.mkdir(parents=True)
    for name in ("knowledge.jsonl", "knowledge.index.sqlite"):
        shutil.copyfile(source / "project" / ".swarm" / name, target / name)
    index = FileIndex.open(target / "knowledge.jsonl")  # in step, as after any search
    if index is not None:
        index.close()


def child(scratch: Path, path: str, op: str, calls: int) -> dict[str, Any]:
    env = child_env(scratch, REPO, True)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(scratch), path, op, str(calls)],
        cwd=scratch, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{path} {op} child failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(source: Path, entries: int, calls: int, scratch: Path) -> list[dict[str, Any]]:
    store = source / "project" / ".swarm" / "knowledge.jsonl"
    if not (store.with_name("knowledge.index.sqlite")).exists():
        raise SystemExit(f"{source}: run bench.worker_memory --root first (store and index)")
    ids = [json.loads(line)["id"] for line in store.read_text().splitlines()]
    out = []
    for op in ("shown", "commit", "append"):
        for path in ("mirror", "index"):
            prepare(source, scratch)
            (scratch / "ids.json").write_text(json.dumps(ids))
            (scratch / "home").mkdir(exist_ok=True)
            result = child(scratch, path, op, calls if op == "shown" else 1)
            result.update(entries=entries, op=op, path=path)
            print(json.dumps(result), flush=True)
            out.append(result)
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--root", type=Path, required=True,
                        help="bench.worker_memory's --root (its stores and indexes)")  # fmt: skip
    args = parser.parse_args()
    results = []
    scratch = Path(tempfile.mkdtemp(prefix="transaction-index-"))
    try:
        for entries in args.entries:
            results += measure(args.root / str(entries), entries, args.calls, scratch / "s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = []
    by_key = {(r["entries"], r["op"], r["path"]): r for r in results}
    for (entries, op, path), r in by_key.items():
        base = by_key[(entries, op, "mirror")]
        first, later = r["ms"][0], _mean(r["ms"][1:])
        base_later = _mean(base["ms"][1:])
        rows.append([
            f"{entries:,}", op, path, f"{first:.0f} ({first / base['ms'][0]:.2f}×)",
            "" if later is None or base_later is None else f"{later:.0f} ({later / base_later:.2f}×)",
            f"{r['marks']['end']['VmRSS']:.0f}", f"{r['marks']['end']['VmHWM']:.0f}",
            "yes" if r["loaded"] else "no",
        ])  # fmt: skip
    table(
        "write paths: transaction through the index vs the mirror (ms, MB; × the mirror's)",
        ["entries", "write", "path", "first call", "later calls (mean)", "RSS at end", "peak",
         "store loaded"],
        rows,
    )  # fmt: skip
    save("transaction_index", {"results": results})


if __name__ == "__main__":
    main()
