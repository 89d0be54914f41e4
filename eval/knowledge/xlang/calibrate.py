"""Choose ``consolidation.multilingual_threshold`` on the tune split of ``labels.json`` only.

For each threshold of the grid: tune translations merged, tune must-stay-apart pairs merged or
superseded, and *orphans* merged: the same stores with one side of every tune translation
removed (the English side, then the Chinese side), where a lesson whose translation is gone must
merge with nothing (mutual nearest neighbours can be fooled only when the true partner is
missing, which a set holding every translation never shows). Held items are never read.

Rule: the threshold with the most tune translations merged among those with no violation and no
orphan merged at it *and at the grid point below it* (one step of margin: real stores are larger
than this set); ties go to the higher threshold.

    python eval/knowledge/xlang/calibrate.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier
from swarmq.eval.knowledge import Labels, evaluate_consolidation, load_labels, merged_store
from swarmq.similarity.script import non_latin

HERE = Path(__file__).resolve().parent
GRID = [round(0.4 + 0.05 * k, 2) for k in range(9)]


def orphans_merged(labels: Labels, threshold: float, drop_chinese: bool) -> int:
    tune = [x for x in labels.duplicates if x["split"] == "tune"]
    lessons = {}
    for path in labels.stores.glob("*.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            entry = json.loads(line)
            lessons[entry["id"]] = entry["lesson"]
    drop = {x["a"] if non_latin(lessons[x["a"]]) == drop_chinese else x["b"] for x in tune}
    orphans = {x["a"] if x["a"] not in drop else x["b"] for x in tune}
    tmp = Path(tempfile.mkdtemp(prefix="xlang-orphans-"))
    try:
        (tmp / "stores").mkdir()
        for path in labels.stores.glob("*.jsonl"):
            kept = [
                line
                for line in path.read_text("utf-8").splitlines()
                if json.loads(line)["id"] not in drop
            ]
            (tmp / "stores" / path.name).write_text("\n".join(kept) + "\n", "utf-8")
        with merged_store(Labels(tmp / "labels.json", tmp / "stores", [], [], [])) as knowledge:
            report = consolidate_tier(
                knowledge.swarm,
                ConsolidationConfig(multilingual_threshold=threshold),
                scope="eval",
                dry_run=True,
            )
        return sum(1 for a in report.plan.actions if a.keep in orphans or a.other in orphans)
    finally:
        shutil.rmtree(tmp)


def main() -> None:
    labels = load_labels(HERE / "labels.json")
    rows = []
    for threshold in GRID:
        figures = evaluate_consolidation(
            labels, "tune", ConsolidationConfig(multilingual_threshold=threshold)
        )
        merged = figures.duplicates["translation"].tp
        total = merged + figures.duplicates["translation"].fn
        orphan = orphans_merged(labels, threshold, False) + orphans_merged(labels, threshold, True)
        rows.append((threshold, merged, total, figures.violations, orphan))
        print(
            f"{threshold:.2f}  translations {merged}/{total}  violations {figures.violations}"
            f"  orphans merged {orphan}",
            flush=True,
        )
    clean = [r[3] == 0 and r[4] == 0 for r in rows]
    eligible = [r for k, r in enumerate(rows) if clean[k] and k > 0 and clean[k - 1]]
    best = max(eligible, key=lambda r: (r[1], r[0]))
    print(f"chosen: {best[0]:.2f} ({best[1]}/{best[2]} tune translations merged)")


if __name__ == "__main__":
    main()
