"""Leave-one-workspace-out calibration of the flywheel's two floors together: the word share a
learning or pattern needs under injection (``injection_floors``: today the knowledge store's
``inject_min_relevance``, 0.4) and its dense floor (``DenseFloors.flywheel``, with the title held
to the same floor, as the default does).

The word-share floor is in the grid because on the tune split of eval/knowledge/workspaces the
unrelated learnings injected for tasks nothing is relevant to are reached by their words as often
as by their cosine (docs/QUALITY.md, "Issue 26: more workspaces with learnings"). For every
workspace a pair is chosen on the tune queries of every *other* workspace by the mean of the
top-3 hit rate and the abstain rate (ties to the higher floors: silence is the safer error), then
judged on the left-out workspace's tune queries. The memory floors stay the defaults; the
knowledge store runs on WordLlama, as in calibrate_stores.py. Held queries are never read.

    python eval/knowledge/calibrate_flywheel.py
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from calibrate_stores import _pool, _rates, _score  # this folder's sibling script

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated.meaning import DENSE_FLOORS, WORDLLAMA, DenseFloors
from swarmq.federated.search import injection_floors
from swarmq.federated.stores import Floors
from swarmq.knowledge.config import DenseModel, KnowledgeConfig

HERE = Path(__file__).parent
SHARE = (0.34, 0.4, 0.45, 0.5, 0.55, 0.6)
"""Word-share floors tried for learnings and patterns (0.34: ``lookup``'s own)."""
DENSE = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 1.01)
"""Dense floors tried (WordLlama; text and title alike); 1.01: off."""

Cell = tuple[float, float]


def main() -> None:
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig(dense_model=DenseModel.WORDLLAMA)
    lexical = injection_floors(config)
    base = DENSE_FLOORS[WORDLLAMA]
    grid: list[Cell] = list(itertools.product(SHARE, DENSE))
    ok: dict[Cell, list[bool]] = {}
    queries: list[tuple[str, bool]] = []
    for share, dense in grid:
        floors = Floors(share, lexical.memory, DenseFloors(dense, base.memory, dense))
        figures = evaluate_cross_store(labels, "tune", config, floors)
        ok[(share, dense)] = [bool(d["ok"]) for d in figures.details]
        queries = [(str(d["workspace"]), bool(d["relevant"])) for d in figures.details]
    workspaces = sorted({w for w, _ in queries})
    per_fold: dict[str, Any] = {}
    pooled = {"top3": [0, 0], "abstain": [0, 0]}
    for left in workspaces:
        train = [i for i, (w, _) in enumerate(queries) if w != left]
        best = max(grid, key=lambda g: (_score(ok[g], queries, train), g))
        test = [i for i, (w, _) in enumerate(queries) if w == left]
        _pool(pooled, ok[best], queries, test)
        per_fold[left] = {
            "chosen": f"{best[0]}/{best[1]}",
            "left_out_ok": f"{sum(ok[best][i] for i in test)}/{len(test)}",
        }
    everywhere = list(range(len(queries)))
    best_all = max(grid, key=lambda g: (_score(ok[g], queries, everywhere), g))
    default = (lexical.flywheel, base.flywheel)
    out: dict[str, Any] = {
        "queries": len(queries),
        "left_out": {k: f"{h}/{t}" for k, (h, t) in pooled.items()},
        "per_fold": per_fold,
        "best_on_all_tune": f"{best_all[0]}/{best_all[1]}",
        "default": f"{default[0]}/{default[1]}",
        "per_cell": {
            f"{a}/{b}": {
                "all": _rates(ok[(a, b)], queries),
                **{
                    w: _rates(
                        [ok[(a, b)][i] for i, q in enumerate(queries) if q[0] == w],
                        [q for q in queries if q[0] == w],
                    )
                    for w in workspaces
                },
            }
            for a, b in grid
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
