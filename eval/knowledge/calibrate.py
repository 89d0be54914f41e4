"""Leave-one-store-out calibration of hybrid injection's two floors.

For every store, the floors (``inject_min_relevance``, ``dense_min_similarity``) are chosen on
the tune queries of every *other* store (both label files: ``labels.json``, worded like the
lessons, and ``tasks.json``, worded like real tasks; queries with nothing relevant are dealt to
the folds in turn) by the mean of top-3 hit rate and abstain rate, then judged on the left-out store's
queries. The pooled left-out figures say how well a floor chosen elsewhere transfers to a store
it never saw; the choice per fold says whether the default is stable. Held queries are never
read.

    python eval/knowledge/calibrate.py [wordllama|minilm]

The dense floors searched depend on the model (``knowledge.dense_model``, default wordllama):
a transformer's cosines sit on another scale than static vectors'.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from swarmq.eval.knowledge import _entries, load_labels, merged_store
from swarmq.knowledge.config import DenseModel, KnowledgeConfig
from swarmq.knowledge.inject import inject
from swarmq.knowledge.query import QueryContext
from swarmq.knowledge.vectors import fill

HERE = Path(__file__).parent
LEXICAL_FLOORS = (0.25, 0.32, 0.4)
DENSE_FLOORS = {
    DenseModel.WORDLLAMA: (0.3, 0.33, 0.35, 0.38, 0.4, 0.45, 0.5),
    DenseModel.MINILM: (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6),
}


def main() -> None:
    model = DenseModel(sys.argv[1] if len(sys.argv) > 1 else DenseModel.WORDLLAMA)
    labels = [load_labels(HERE / name) for name in ("labels.json", "tasks.json")]
    store_of = {entry["id"]: store for entry, store in _entries(labels[0].stores)}
    queries = [q for lab in labels for q in lab.select(lab.queries, "tune")]
    stores = sorted({store_of[q["relevant"][0]] for q in queries if q["relevant"]})
    # Queries with nothing relevant are dealt round-robin to the store folds, so every fold
    # trains on some and is judged on some.
    fold = [
        store_of[q["relevant"][0]] if q["relevant"] else stores[i % len(stores)]
        for i, q in enumerate(queries)
    ]
    grid = list(itertools.product(LEXICAL_FLOORS, DENSE_FLOORS[model]))
    ok: dict[tuple[float, float], list[bool]] = {}
    with merged_store(labels[0], KnowledgeConfig(dense_model=model)) as knowledge:
        # every entry embedded first, as the eval does (the steady state a workspace reaches):
        # a slow model's query embeds only a few entries itself, so without this the first
        # grid points were judged with almost no entry vectors
        fill(knowledge)
        for lexical, dense in grid:
            config = KnowledgeConfig(
                swarm_max_entries=None,
                inject_min_relevance=lexical,
                dense_min_similarity=dense,
                dense_model=model,
            )
            scoped = knowledge.with_config(config)
            ok[(lexical, dense)] = [
                _correct(q, inject(scoped, QueryContext(text=q["text"]), record=False).shown)
                for q in queries
            ]
    chosen: Counter[tuple[float, float]] = Counter()
    pooled = {"top3": [0, 0], "abstain": [0, 0]}
    for store in sorted(set(fold)):
        train = [i for i, f in enumerate(fold) if f != store]
        best = max(grid, key=lambda g: (_score(ok[g], queries, train), g == (0.32, 0.35)))
        chosen[best] += 1
        for i in (i for i, f in enumerate(fold) if f == store):
            key = "top3" if queries[i]["relevant"] else "abstain"
            pooled[key][0] += ok[best][i]
            pooled[key][1] += 1
    out: dict[str, Any] = {
        "model": model.value,
        "queries": len(queries),
        "folds": len(set(fold)),
        "left_out": {
            k: {"hits": h, "total": t, "rate": round(h / t, 3)} for k, (h, t) in pooled.items()
        },
        "chosen_per_fold": {f"{a}/{b}": n for (a, b), n in chosen.most_common()},
    }
    print(json.dumps(out, indent=2))


def _correct(query: dict[str, Any], shown: list[Any]) -> bool:
    ids = [r.entry.id for r in shown]
    relevant = set(query["relevant"])
    return bool(relevant & set(ids[:3])) if relevant else not ids


def _score(ok: list[bool], queries: list[dict[str, Any]], rows: list[int]) -> float:
    hit = [ok[i] for i in rows if queries[i]["relevant"]]
    silent = [ok[i] for i in rows if not queries[i]["relevant"]]
    return (sum(hit) / max(1, len(hit)) + sum(silent) / max(1, len(silent))) / 2


if __name__ == "__main__":
    main()
