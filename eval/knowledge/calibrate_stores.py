"""Leave-one-workspace-out calibration of the dense floors of learnings, patterns, pool
candidates and memory notes (``swarmq.federated.meaning.DENSE_FLOORS``).

For every workspace of eval/knowledge/workspaces/queries.json, the pair of floors (flywheel,
memory) is chosen on the tune queries of every *other* workspace by the mean of the top-3 hit
rate and the abstain rate, then judged on the left-out workspace's tune queries. Ties go first to
one floor for both kinds (a kind the training workspaces hold no evidence for takes the other
kind's floor: on this set only clai's learnings gain from a flywheel floor and only yosi-swarm's
notes from a memory floor, so leaving either out leaves its kind unobserved), then to the higher
floors (silence is the safer error). The pooled left-out figures say how well a floor chosen
elsewhere transfers to a workspace it never saw; the choice per fold says whether the default is
stable. The lexical floors stay injection's own. Held queries are never read.

    python eval/knowledge/calibrate_stores.py [--model wordllama|minilm] [grid.json]

With a path, the per-query outcomes of the grid are kept there (after every cell) and reused by
the next run (the grid costs minutes; the folds, milliseconds).

Each packaged model is calibrated on its own grid (cosines of different models are on different
scales: MiniLM's related pairs sit lower than WordLlama's). A memory file's note vectors are
reused across the grid's cells by the file's content (the evaluation copies every workspace to a
new directory per cell, so the search's own cache, keyed by path, would embed them again).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated import meaning
from swarmq.federated.meaning import DenseFloors
from swarmq.federated.search import injection_floors
from swarmq.federated.stores import Floors
from swarmq.knowledge.config import DenseModel, KnowledgeConfig

HERE = Path(__file__).parent
GRIDS = {
    DenseModel.WORDLLAMA: (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 1.01),
    DenseModel.MINILM: (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 1.01),
}
"""Both kinds' floors, per model. 1.01: no cosine reaches it (word share alone, as before)."""


def _memoise_memory_files() -> None:
    """Reuse a memory file's note vectors by its content across the grid's workspace copies."""
    read = meaning.MemoryVectors._read
    seen: dict[tuple[int, bytes], meaning.MemoryFile | None] = {}

    def cached(
        self: meaning.MemoryVectors, path: str, stamp: tuple[int, int], note_text: Any
    ) -> meaning.MemoryFile | None:
        key = (id(note_text), hashlib.sha256(Path(path).read_bytes()).digest())
        if key not in seen:
            seen[key] = read(self, path, stamp, note_text)
        found = seen[key]
        return None if found is None else dataclasses.replace(found, stamp=stamp)

    meaning.MemoryVectors._read = cached  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=[m.value for m in GRIDS], default="wordllama")
    parser.add_argument("kept", nargs="?", type=Path)
    args = parser.parse_args()
    _memoise_memory_files()
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig(dense_model=DenseModel(args.model))
    lexical = injection_floors(config)
    steps = GRIDS[DenseModel(args.model)]
    grid = list(itertools.product(steps, steps))
    ok: dict[tuple[float, float], list[bool]] = {}
    queries: list[tuple[str, bool]] = []
    kept: Path | None = args.kept
    if kept is not None and kept.is_file():
        data = json.loads(kept.read_text("utf-8"))
        queries = [(str(w), bool(r)) for w, r in data["queries"]]
        ok = {(float(a), float(b)): list(v) for a, b, v in data["ok"]}
    for flywheel, memory in grid:
        if (flywheel, memory) in ok:
            continue
        floors = Floors(lexical.flywheel, lexical.memory, DenseFloors(flywheel, memory))
        figures = evaluate_cross_store(labels, "tune", config, floors)
        ok[(flywheel, memory)] = [bool(d["ok"]) for d in figures.details]
        if not queries:
            queries = [(str(d["workspace"]), bool(d["relevant"])) for d in figures.details]
        if kept is not None:
            kept.write_text(
                json.dumps({"queries": queries, "ok": [[a, b, v] for (a, b), v in ok.items()]}),
                "utf-8",
            )
    workspaces = sorted({w for w, _ in queries})
    chosen: Counter[tuple[float, float]] = Counter()
    per_fold: dict[str, Any] = {}
    pooled = {"top3": [0, 0], "abstain": [0, 0]}
    for left in workspaces:
        train = [i for i, (w, _) in enumerate(queries) if w != left]
        best = max(grid, key=lambda g: _preference(ok[g], queries, train, g))
        chosen[best] += 1
        test = [i for i, (w, _) in enumerate(queries) if w == left]
        _pool(pooled, ok[best], queries, test)
        per_fold[left] = {
            "chosen": f"{best[0]}/{best[1]}",
            "left_out_ok": f"{sum(ok[best][i] for i in test)}/{len(test)}",
        }
    everywhere = list(range(len(queries)))
    best_all = max(grid, key=lambda g: _preference(ok[g], queries, everywhere, g))
    out: dict[str, Any] = {
        "model": config.model.value,
        "queries": len(queries),
        "folds": len(workspaces),
        "left_out": {
            k: {"hits": h, "total": t, "rate": round(h / t, 3)} for k, (h, t) in pooled.items()
        },
        "per_fold": per_fold,
        "chosen_per_fold": {f"{a}/{b}": n for (a, b), n in chosen.most_common()},
        "best_on_all_tune": f"{best_all[0]}/{best_all[1]}",
        "all_tune_at_best": _rates(ok[best_all], queries),
        "all_tune_word_share_only": _rates(ok[(1.01, 1.01)], queries),
    }
    print(json.dumps(out, indent=2))


def _rates(ok: list[bool], queries: list[tuple[str, bool]]) -> dict[str, str]:
    hit = [ok[i] for i, (_, relevant) in enumerate(queries) if relevant]
    silent = [ok[i] for i, (_, relevant) in enumerate(queries) if not relevant]
    return {"top3": f"{sum(hit)}/{len(hit)}", "abstain": f"{sum(silent)}/{len(silent)}"}


def _preference(
    ok: list[bool], queries: list[tuple[str, bool]], rows: list[int], floors: tuple[float, float]
) -> tuple[float, bool, tuple[float, float]]:
    return (_score(ok, queries, rows), floors[0] == floors[1], floors)


def _pool(
    pooled: dict[str, list[int]], ok: list[bool], queries: list[tuple[str, bool]], test: list[int]
) -> None:
    """Add the left-out queries ``test`` answered right (``ok``) to the pooled counts."""
    for i in test:
        key = "top3" if queries[i][1] else "abstain"
        pooled[key][0] += ok[i]
        pooled[key][1] += 1


def _score(ok: list[bool], queries: list[tuple[str, bool]], rows: list[int]) -> float:
    hit = [ok[i] for i in rows if queries[i][1]]
    silent = [ok[i] for i in rows if not queries[i][1]]
    return (sum(hit) / max(1, len(hit)) + sum(silent) / max(1, len(silent))) / 2


if __name__ == "__main__":
    main()
