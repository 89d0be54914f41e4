"""A night on a store holding Chinese lessons: with the multilingual vectors kept beside the
store, without them, and with the cross-language pass off (the English-only night), same run.

    python -m bench.crosslingual_nightly [--english 2000] [--chinese 300] [--translations 10]

The store: ``--english`` :mod:`bench.lesson_corpus` lessons, the Chinese rules of
``eval/knowledge/xlang`` (go-spring's and town-os's agent rules) and ``--chinese`` more Chinese
lessons made of two of those rules each (never one of the tested rules below), all in one
project, with a ``swarm.yaml`` beside it. A first run (full: no watermark yet) consolidates it
and fills the vector file. Then 1 % new lessons are appended: ``--translations`` English rules
whose Chinese translation is in the store (the night should find them) and English corpus
lessons. That state is consolidated by nights, each in a fresh process and restored to the same
paths first, in interleaved order: ``kept`` (the vector file as the first run left it),
``none`` (the file deleted: the night embeds the whole scope, as a fresh process would without
it), ``off`` (``multilingual_duplicates: false``, with its own first run since the watermark
names the settings: the night as it ran before nights looked for translations). Wall time, CPU
time and peak RSS (VmHWM) per child; the actions of ``kept`` and ``none`` must be equal.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import REPO, console, save, table
from bench.consolidation_nightly import CHILD, line_of, store_path
from bench.consolidation_nightly import roster as nightly_roster
from bench.lesson_corpus import generate
from swarmq.consolidation._mlvectors import vectors_file
from swarmq.similarity.multilingual import available
from swarmq.similarity.script import non_latin

XLANG = REPO / "eval" / "knowledge" / "xlang" / "stores"


def roster(root: Path, crosslingual: bool) -> Path:
    return nightly_roster(root, {"multilingual_duplicates": crosslingual}, swarm="benchxlang")


def child(root: Path, mode: str, crosslingual: bool = True) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(roster(root, crosslingual)), str(root / "locks"), mode],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = Path("/proc/loadavg").read_text().split()[:3]
    return result


def rules() -> list[tuple[str, str]]:
    """(English, Chinese) of each labelled translation of the xlang stores."""
    lessons: dict[str, str] = {}
    for path in sorted(XLANG.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                value = json.loads(line)
                lessons[value["id"]] = value["lesson"]
    labels = json.loads((XLANG.parent / "labels.json").read_text(encoding="utf-8"))
    out = []
    for label in labels["duplicates"]:  # less one whose Chinese is mostly code (Latin)
        a, b = lessons[label["a"]], lessons[label["b"]]
        if non_latin(a) != non_latin(b):
            out.append((b, a) if non_latin(a) else (a, b))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--english", type=int, default=2000)
    parser.add_argument("--chinese", type=int, default=300)
    parser.add_argument("--translations", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    if not available():
        raise SystemExit("the multilingual extra is not installed")
    rng = random.Random(26)
    pairs = rules()
    tested = rng.sample(pairs, args.translations)  # their English is new tonight
    rest = [zh for pair, zh in ((p, p[1]) for p in pairs) if pair not in tested]
    combos = [(a, b) for a in range(len(rest)) for b in range(len(rest)) if a != b]
    rng.shuffle(combos)  # more Chinese lessons, none holding a tested rule
    chinese = [zh for _, zh in pairs] + [f"{rest[a]}{rest[b]}" for a, b in combos[: args.chinese]]
    english = generate(args.english, seed=26, dup_rate=0.02, odd_rate=0.0, dark_rate=0.0).lessons
    base = english + chinese
    rng.shuffle(base)
    work = Path(args.dir or "/tmp") / f"bench-xlang-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    new_count = max(1, len(base) // 100)
    fresh = generate(new_count, seed=27, dup_rate=0.0, odd_rate=0.0, dark_rate=0.0).lessons
    new = ([en for en, _ in tested] + fresh)[:new_count]
    firsts, states = {}, {}
    for crosslingual in (True, False):  # the watermark names the settings: one first run each
        state = work / ("on" if crosslingual else "off")
        store_path(state).parent.mkdir(parents=True)
        at = "2026-12-01T00:00:00.000Z"
        lines = "".join(f"{line_of(t, at)}\n" for t in base)
        store_path(state).write_text(lines, encoding="utf-8")
        first = firsts[crosslingual] = child(state, "night", crosslingual)  # no watermark: full
        kept = vectors_file(store_path(state), "use-multilingual-v3")
        assert first["summary"]["mode"] == "full" and kept.exists() == crosslingual
        at = "2026-12-02T00:00:00.000Z"
        with store_path(state).open("a", encoding="utf-8") as handle:
            handle.writelines(f"{line_of(t, at)}\n" for t in new)
        states[crosslingual] = state
        shutil.copytree(store_path(state).parent, work / f"aside-{crosslingual}")
    first = firsts[True]
    runs: dict[str, list[dict[str, Any]]] = {"kept": [], "none": [], "off": []}
    for round_no in range(args.rounds):
        order = ["kept", "none", "off"] if round_no % 2 == 0 else ["off", "none", "kept"]
        for mode in order:
            crosslingual = mode != "off"
            state = states[crosslingual]
            shutil.rmtree(store_path(state).parent)  # the same state, paths and lock names
            shutil.copytree(work / f"aside-{crosslingual}", store_path(state).parent)
            if mode == "none":
                vectors_file(store_path(state), "use-multilingual-v3").unlink()
            runs[mode].append(child(state, "night", crosslingual))
    actions = {mode: [r["actions"] for r in results] for mode, results in runs.items()}
    same = all(a == actions["kept"][0] for a in actions["kept"] + actions["none"])
    rows = [
        [
            mode,
            r["summary"]["mode"],
            r["summary"]["focus"],
            len(r["actions"]),
            round(r["seconds"], 2),
            round(r["cpu_seconds"], 2),
            round(r["peak_rss_mib"]),
            r["load"][0],
        ]
        for mode, results in runs.items()
        for r in results
    ]
    rows.insert(0, ["first (full)", "full", None, len(first["actions"]),
                    round(first["seconds"], 2), round(first["cpu_seconds"], 2),
                    round(first["peak_rss_mib"]), first["load"][0]])  # fmt: skip
    table(
        f"{len(base)} lessons ({len(chinese)} Chinese), {new_count} new "
        f"({args.translations} English rules whose translation is stored)",
        ["run", "mode", "focus", "actions", "wall s", "cpu s", "peak MiB", "load 1m"],
        rows,
    )
    best = {mode: min(r["seconds"] for r in results) for mode, results in runs.items()}
    console.print(
        f"night with the vector file / without: {best['kept'] / best['none']:.2f}; "
        f"with the file / pass off: {best['kept'] / best['off']:.2f}; "
        f"kept and none act alike: {same}; "
        f"actions more than the pass-off night: "
        f"{len(actions['kept'][0]) - len(actions['off'][0])}"
    )
    save(
        "crosslingual_nightly",
        {"args": vars(args) | {"dir": str(args.dir)}, "first": first, "runs": runs, "same": same},
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
