"""Leave-one-workspace-out calibration of the flywheel floor with and without titles
(``DenseFloors.title``): a learning or pattern relevant when its meaning text *or its title
alone* reaches the floor, against the text alone; the memory floor kept at the model's.

Two grids: the flywheel floor with titles not measured, and with the title held to the same
floor (one floor, no new parameter); and, for the record, a title floor of its own beside the
calibrated flywheel floor. For every workspace of eval/knowledge/workspaces/queries.json a
floor is chosen on the tune queries of every *other* workspace by the mean of the top-3 hit rate
and the abstain rate (ties to the higher floor: silence is the safer error, "off" the highest),
then judged on the left-out workspace's tune queries. Held queries are never read. The
knowledge store runs on WordLlama, as in calibrate_stores.py (the floors here move learnings
and patterns only).

    python eval/knowledge/calibrate_titles.py
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from calibrate_stores import _pool, _score  # this folder's sibling script: one balanced score

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated.meaning import DENSE_FLOORS, WORDLLAMA, DenseFloors
from swarmq.federated.search import injection_floors
from swarmq.federated.stores import Floors
from swarmq.knowledge.config import DenseModel, KnowledgeConfig

HERE = Path(__file__).parent
GRID = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, None)
"""Floors tried (WordLlama); ``None``: off (no cosine makes a record relevant)."""
OWN = (0.25, 0.275, 0.3, 0.325, 0.35, 0.375, 0.4, 0.425, 0.45, 0.5, None)
"""A title floor of its own, beside the calibrated flywheel floor."""


def _key(floor: float | None) -> float:
    return 2.0 if floor is None else floor


Cell = tuple[str, float | None]


def main() -> None:
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig(dense_model=DenseModel.WORDLLAMA)
    lexical = injection_floors(config)
    base = DENSE_FLOORS[WORDLLAMA]
    off = 1.01
    cells: dict[str, dict[float | None, DenseFloors]] = {
        "text": {f: DenseFloors(off if f is None else f, base.memory) for f in GRID},
        "text or title": {f: DenseFloors(off if f is None else f, base.memory, f) for f in GRID},
        "title floor of its own": {f: dataclasses.replace(base, title=f) for f in OWN},
    }
    out: dict[str, Any] = {}
    for name, grid in cells.items():
        ok: dict[float | None, list[bool]] = {}
        queries: list[tuple[str, bool]] = []
        for floor, dense in grid.items():
            figures = evaluate_cross_store(
                labels, "tune", config, Floors(lexical.flywheel, lexical.memory, dense)
            )
            ok[floor] = [bool(d["ok"]) for d in figures.details]
            queries = [(str(d["workspace"]), bool(d["relevant"])) for d in figures.details]
        out[name] = _folds(list(grid), ok, queries)
    print(json.dumps(out, indent=2))


def _folds(
    grid: list[float | None], ok: dict[float | None, list[bool]], queries: list[tuple[str, bool]]
) -> dict[str, Any]:
    workspaces = sorted({w for w, _ in queries})
    per_fold: dict[str, Any] = {}
    pooled = {"top3": [0, 0], "abstain": [0, 0]}
    for left in workspaces:
        train = [i for i, (w, _) in enumerate(queries) if w != left]
        best = max(grid, key=lambda f: (_score(ok[f], queries, train), _key(f)))
        test = [i for i, (w, _) in enumerate(queries) if w == left]
        _pool(pooled, ok[best], queries, test)
        per_fold[left] = {
            "chosen": best,
            "left_out_ok": f"{sum(ok[best][i] for i in test)}/{len(test)}",
        }
    everywhere = list(range(len(queries)))
    best_all = max(grid, key=lambda f: (_score(ok[f], queries, everywhere), _key(f)))
    return {
        "left_out": {k: f"{h}/{t}" for k, (h, t) in pooled.items()},
        "per_fold": per_fold,
        "best_on_all_tune": best_all,
        "per_floor": {
            str(f): {
                "all": _rates(ok[f], queries),
                **{
                    w: _rates(
                        [ok[f][i] for i, q in enumerate(queries) if q[0] == w],
                        [q for q in queries if q[0] == w],
                    )
                    for w in workspaces
                },
            }
            for f in grid
        },
    }


def _rates(ok: list[bool], queries: list[tuple[str, bool]]) -> str:
    hit = [ok[i] for i, (_, relevant) in enumerate(queries) if relevant]
    silent = [ok[i] for i, (_, relevant) in enumerate(queries) if not relevant]
    return f"top3 {sum(hit)}/{len(hit)}, silent {sum(silent)}/{len(silent)}"


if __name__ == "__main__":
    main()
