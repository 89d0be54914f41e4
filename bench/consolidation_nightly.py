"""Nightly consolidation with 1 % new entries against the full consolidation, same run.

    python -m bench.consolidation_nightly [--sizes 10000 100000] [--new 0.01] [--dir /tmp]

For each size a knowledge store of :mod:`bench.lesson_corpus` lessons (2 % near-duplicates) is
written with a ``swarm.yaml`` beside it. A first run (full: there is no watermark yet)
consolidates it; then ``--new`` of the size is appended (half near-duplicates of stored lessons,
half new lessons) and two copies of that state are consolidated, each in a fresh process that
loads the roster: the nightly run (the entries changed since the watermark against the whole
store) and the full pass (``full=True``), the baseline. Each child reports its wall time and its
peak RSS (``VmHWM`` of ``/proc/self/status``). Recall: the full join's pairs (at the complement
threshold) that involve a new entry, against the focused join's, and the two runs' actions on
the same state.

With ``--index`` the store's persisted index (lexical) is built on the base store before the
new entries are appended, as the day's searches would have kept it, so the nightly run reads the
store through it (``summary.indexed``; ``summary.parsed`` entries parsed); a dry nightly run
(``nightly_dry``: the plan alone, without the commit's load of the store under its lock) is
timed too, and the recall check also asks the index which entries may pair with each new one
(``index_cover``: the full join's pairs with a new entry whose partner the index proposed).

``--watermark-only`` skips the first full run and writes the watermark of the base store
directly (what a run would have left, minus its merges): for 1M, where a full run is the cost
being avoided. ``--nightly-only`` skips the recall check and the full pass (at 1M they cost
about 6 GB and 10 minutes, and 9 GB and 30 minutes): the nightly children alone.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bench.common import REPO, console, save, table
from bench.lesson_corpus import LessonGenerator
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.model import Tier
from swarmq.knowledge.reinforcement import NewLesson, new_entry
from swarmq.similarity.join import focused_join, similarity_join
from swarmq.similarity.sets import encode
from swarmq.storage.clock import iso

CONFIG = KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None)
REDIS_URL = "redis://127.0.0.1:6379/9"

CHILD = """
import json, sys, time
started = time.perf_counter()
from pathlib import Path
from swarmq.roster.loader import load_roster
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.consolidation import run_roster_scope
roster = load_roster(Path(sys.argv[1]))
report = run_roster_scope(roster, LocalLocks(Path(sys.argv[2])), "swarm", full=sys.argv[3] == "full",
                          dry_run=sys.argv[3] == "dry")
seconds = time.perf_counter() - started
status = Path("/proc/self/status").read_text()
hwm = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "cpu_seconds": time.process_time(),
                  "peak_rss_mib": hwm / 1024, "summary": report.summary(),
                  "actions": sorted([a.kind.value, a.keep, a.other] for a in report.plan.actions)}))
"""


def line_of(text: str, at: str) -> str:
    entry = new_entry(
        NewLesson(text or "(empty)"), tier=Tier.SWARM, project_name="bench", phase=1, at=at,
        config=CONFIG,
    )  # fmt: skip
    return json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":"))


DENSE = {"dense_duplicates": True}
"""``--no-dense`` turns the dense paraphrase pass off for both runs (it needs every lesson's
vector, so a store small enough for it is loaded, never read through the index)."""


def roster(
    root: Path, consolidation: dict[str, Any] | None = None, swarm: str = "benchnightly"
) -> Path:
    """The bench's ``swarm.yaml`` in ``root`` (``consolidation``: that section, else the
    dense setting under test)."""
    path = root / "swarm.yaml"
    path.write_text(yaml.safe_dump({
        "consolidation": dict(DENSE) if consolidation is None else consolidation,
        "swarm": swarm, "workspace": str(root / "project"),
        "paths": {"profiles": str(root / "profiles"), "runtime": str(root / "runtime"),
                  "shared": str(root / "shared"), "hive": str(root / "hive")},
        "redis_url": REDIS_URL, "workers": [{"id": "w1", "role": "builder"}],
        "knowledge": {"swarm_max_entries": None, "hive_max_entries": None},
    }))  # fmt: skip
    return path


def child(root: Path, mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(roster(root)), str(root / "locks"), mode],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def store_path(root: Path) -> Path:
    return root / "project" / ".swarm" / "knowledge.jsonl"


def index_cover(root: Path, new_ids: set[str], want: set[tuple[str, str]]) -> dict[str, Any]:
    """How many of the full join's pairs with a new entry the index's candidates cover."""
    from swarmq.knowledge.postings import open_reader

    started = time.perf_counter()
    reader = open_reader(store_path(root))
    assert reader is not None
    try:
        t = ConsolidationConfig().complement_threshold
        slots = [int(s) for s in np.flatnonzero(reader.line_no > 0)]
        ids: dict[int, str] = {}
        for start in range(0, len(slots), 900):
            chunk = slots[start : start + 900]
            marks = ",".join("?" * len(chunk))
            ids.update(
                reader.db.execute(
                    f"SELECT slot, id FROM entries WHERE slot IN ({marks})", chunk
                ).fetchall()
            )
        new_slots = [s for s, i in ids.items() if i in new_ids]
        lessons = reader.entries(new_slots)
        proposed: set[tuple[str, str]] = set()
        for entry in lessons.values():
            for other in reader.bigram_candidates(entry.lesson, t).tolist():
                proposed.add((entry.id, ids[other]))
                proposed.add((ids[other], entry.id))
    finally:
        reader.index.close()
    covered = sum(1 for pair in want if pair in proposed)
    return {"pairs": len(want), "covered": covered, "seconds": time.perf_counter() - started}


def recall(root: Path, new_ids: set[str], indexed: bool = False) -> dict[str, Any]:
    """The full join's pairs with a new entry, found by the focused join (complement threshold)."""
    entries = [json.loads(line) for line in store_path(root).read_text().splitlines() if line]
    active = [e for e in entries if e.get("status") != "archived"]
    texts = [e["lesson"] for e in active]
    config = ConsolidationConfig()
    sets = encode(texts, config.measure)
    focus = np.asarray([k for k, e in enumerate(active) if e["id"] in new_ids], dtype=np.int64)
    started = time.perf_counter()
    full = similarity_join(sets, config.complement_threshold)
    full_seconds = time.perf_counter() - started
    started = time.perf_counter()
    part = focused_join(sets, focus, config.complement_threshold)
    focused_seconds = time.perf_counter() - started
    chosen = set(focus.tolist())
    want = {
        (i, j)
        for i, j in zip(full.left.tolist(), full.right.tolist(), strict=True)
        if i in chosen or j in chosen
    }
    got = set(zip(part.left.tolist(), part.right.tolist(), strict=True))
    cover = (
        index_cover(root, new_ids, {(active[i]["id"], active[j]["id"]) for i, j in want})
        if indexed
        else None
    )
    return {
        "index_cover": cover,
        "pairs_with_new": len(want),
        "found": len(want & got),
        "extra": len(got - want),
        "recall": len(want & got) / len(want) if want else 1.0,
        "join_full_seconds": full_seconds,
        "join_focused_seconds": focused_seconds,
    }


def _same(
    night: list[list[str]], with_new: list[list[str]], full: list[list[str]], new: set[str]
) -> bool:
    """The night's actions hold all of the full pass's actions with a new entry, and every
    other action of the night's is the full pass's too, or touches an entry the full pass
    acted on in a pair of two old entries that the night did not take (the paraphrase IDF
    drifted as the store grew: a verdict no incremental run revisits, see
    ``consolidation/_nightly.py``; such actions are listed apart)."""
    mine = {tuple(a) for a in night}
    return mine >= {tuple(a) for a in with_new} and not _unexplained(night, full, new)


def _unexplained(night: list[list[str]], full: list[list[str]], new: set[str]) -> list[list[str]]:
    """The night's actions the full pass does not take, less those explained by drift."""
    known = {tuple(a) for a in full}
    mine = {tuple(a) for a in night}
    drifted = {x for a in full if tuple(a) not in mine and not new & set(a[1:]) for x in a[1:]}
    return [a for a in night if tuple(a) not in known and not drifted & set(a[1:])]


def _only(these: list[list[str]], those: list[list[str]]) -> list[list[str]]:
    """Actions of ``these`` not in ``those`` (at most 20, for the reader)."""
    known = {tuple(a) for a in those}
    return [a for a in these if tuple(a) not in known][:20]


def build_index(root: Path) -> float:
    """The store's lexical index, as a day of searches leaves it (seconds to build)."""
    from swarmq.knowledge._ftsindex import FileIndex

    started, cpu = time.perf_counter(), time.process_time()
    index = FileIndex.open(store_path(root))
    assert index is not None
    index.close()
    print(json.dumps({"index_build_cpu": time.process_time() - cpu}), flush=True)
    return time.perf_counter() - started


def run_size(
    base_dir: Path,
    size: int,
    new_share: float,
    watermark_only: bool,
    indexed: bool = False,
    keep: bool = False,
    nightly_only: bool = False,
) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"nightly{size}-", dir=base_dir))
    try:
        begun = time.perf_counter()
        generator = LessonGenerator(seed=28)
        n_new = max(1, int(size * new_share))
        lessons = generator.corpus(size - n_new, dup_rate=0.02).lessons
        at = iso()
        path = store_path(root)
        path.parent.mkdir(parents=True)
        path.write_text("".join(line_of(t, at) + "\n" for t in lessons), encoding="utf-8")
        first: dict[str, Any] | None = None
        print(f"store of {size:,} written in {time.perf_counter() - begun:.0f} s", flush=True)
        if watermark_only:
            from swarmq.consolidation._watermark import save as save_mark
            from swarmq.consolidation._watermark import watermark_path

            mark = watermark_path(path.with_name("knowledge-consolidation.jsonl"))
            lines = path.read_text(encoding="utf-8").splitlines()
            config = ConsolidationConfig.model_validate(DENSE)
            save_mark(mark, lines, config, run_id=None, at=at, lease=None)
        else:
            first = child(root, "nightly")  # no watermark yet: a full pass
        index_seconds = build_index(root) if indexed else None
        rng = random.Random(size)
        fresh = LessonGenerator(seed=2028)
        added = [
            generator.mutate(rng.choice(lessons)) if k % 2 else fresh.lesson() for k in range(n_new)
        ]
        new_lines = [line_of(t, iso()) for t in added]
        new_ids = {json.loads(line)["id"] for line in new_lines}
        with path.open("a", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in new_lines))
        swarm_dir = path.parent
        aside = root / "state-before"
        shutil.copytree(swarm_dir, aside)
        checked = None if nightly_only else recall(root, new_ids, indexed)
        print(json.dumps({"size": size, "recall": checked}), flush=True)  # 1M: hours; say it now
        dry = child(root, "dry") if indexed else None
        if dry is not None:
            print(json.dumps({"size": size, "nightly_dry": dry["seconds"], "cpu": dry["cpu_seconds"],
                              "peak_rss_mib": dry["peak_rss_mib"]}), flush=True)  # fmt: skip
        nightly = child(root, "nightly")
        print(json.dumps({"size": size, "nightly": nightly["seconds"], "cpu": nightly["cpu_seconds"],
                          "peak_rss_mib": nightly["peak_rss_mib"]}), flush=True)  # fmt: skip
        shutil.rmtree(swarm_dir)
        shutil.copytree(aside, swarm_dir)  # the same state again, same paths and lock names
        if nightly_only:
            return {
                "size": size,
                "new": n_new,
                "index_build_seconds": index_seconds,
                "nightly_dry": dry
                and {k: dry[k] for k in ("seconds", "cpu_seconds", "peak_rss_mib", "summary")},
                "nightly": {
                    k: nightly[k] for k in ("seconds", "cpu_seconds", "peak_rss_mib", "summary")
                },
                "load": Path("/proc/loadavg").read_text().split()[:3],
            }
        full = child(root, "full")
        new_actions = [a for a in full["actions"] if a[1] in new_ids or a[2] in new_ids]
        # Equal: every action of the full pass with a new entry is the night's, and every action
        # of the night's is the full pass's (a merge of a new entry into a cluster goes on to
        # merge old members of it, in both runs: the full pass's own list holds those).
        return {
            "size": size,
            "new": n_new,
            "first_full": first
            and {k: first[k] for k in ("seconds", "cpu_seconds", "peak_rss_mib")},
            "index_build_seconds": index_seconds,
            "nightly_dry": dry
            and {k: dry[k] for k in ("seconds", "cpu_seconds", "peak_rss_mib", "summary")},
            "dry_actions_equal": dry is None
            or _same(dry["actions"], new_actions, full["actions"], new_ids),
            "nightly": {
                k: nightly[k] for k in ("seconds", "cpu_seconds", "peak_rss_mib", "summary")
            },
            "full": {k: full[k] for k in ("seconds", "cpu_seconds", "peak_rss_mib", "summary")},
            "speedup": full["seconds"] / nightly["seconds"],
            "actions_nightly": len(nightly["actions"]),
            "actions_full_with_new": len(new_actions),
            "actions_equal": _same(nightly["actions"], new_actions, full["actions"], new_ids),
            "actions_only_nightly": _only(nightly["actions"], full["actions"]),
            "actions_only_nightly_unexplained": _unexplained(
                nightly["actions"], full["actions"], new_ids
            ),
            "actions_only_full": _only(new_actions, nightly["actions"]),
            "recall": checked,
        }
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--new", type=float, default=0.01)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--watermark-only", action="store_true")
    parser.add_argument("--index", action="store_true", help="build the index before the night")
    parser.add_argument("--keep", action="store_true", help="keep the stores (state-before)")
    parser.add_argument("--no-dense", action="store_true", help="dense paraphrase pass off")
    parser.add_argument(
        "--nightly-only", action="store_true", help="no recall check and no full pass"
    )
    args = parser.parse_args()
    DENSE["dense_duplicates"] = not args.no_dense
    rows = []
    results = []
    for size in args.sizes:
        result = run_size(
            args.dir, size, args.new, args.watermark_only, args.index, args.keep, args.nightly_only
        )
        results.append(result)
        console.print(json.dumps(result, indent=1))
        if args.nightly_only:
            continue
        rows.append([
            f"{size:,}", result["new"], result["full"]["seconds"], result["full"]["peak_rss_mib"],
            result["nightly"]["seconds"], result["nightly"]["peak_rss_mib"],
            f"{result['speedup']:.1f}x", f"{result['recall']['recall']:.4f}",
            f"{result['recall']['pairs_with_new']}", str(result["actions_equal"]),
        ])  # fmt: skip
    table(
        "nightly consolidation (1 % new) vs full, fresh processes, swarm.yaml present",
        ["entries", "new", "full s", "full MiB", "nightly s", "nightly MiB", "speed-up",
         "pair recall", "pairs w/ new", "same actions"],
        rows,
    )  # fmt: skip
    save("consolidation_nightly", {"results": results, "new_share": args.new})


if __name__ == "__main__":
    main()
