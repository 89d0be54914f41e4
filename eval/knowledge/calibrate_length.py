"""Leave-one-workspace-out test of a learning's word share made robust to its length: the share
scaled by ``min(1, sqrt(P / words))`` (a record longer than ``P`` words counts less of what it
holds) and, beside it, a fused floor (a learning or pattern is also relevant when the mean of
its share and its nearer cosine, the relevance it is ranked by, reaches ``F``), with the share
floor learnings and patterns need under injection.

Long topical learnings (a research note, a living review) hold the generic words of many short
tasks, so the plain share both admits them and ranks them first (docs/QUALITY.md, "Issue 26:
more workspaces with learnings"). The variants are applied around ``flywheel.lookup.search`` as
the federated injection calls it (every record measured, then admitted and ranked again), so
the product code is untouched; on the default settings the grid's "whole, off" cells are
today's rule. For every workspace a cell is chosen on the tune queries of every *other*
workspace by the mean of the top-3 hit rate and the abstain rate (ties to the higher share
floor, then to the old behaviour: no penalty, no fused floor), then judged on the left-out
workspace. The knowledge store runs on WordLlama, as in calibrate_stores.py. Held queries are
never read. Result (docs/QUALITY.md, "Issue 26: word share robust to record length"): no cell
improves the pooled left-out figures without losing silence; not adopted.

    python eval/knowledge/calibrate_length.py
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from calibrate_stores import _pool, _rates, _score  # this folder's sibling script

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated import stores
from swarmq.federated.search import injection_floors
from swarmq.federated.stores import Floors
from swarmq.flywheel import lookup
from swarmq.flywheel.lookup import LookupHit, fused_relevance, words
from swarmq.flywheel.model import LAMBDA
from swarmq.knowledge.config import DenseModel, KnowledgeConfig

HERE = Path(__file__).parent
SHARE = (0.4, 0.45)
"""Share floors for learnings and patterns (0.45: today's ``FLYWHEEL_SHARE``)."""
PIVOT = (150, 300, None)
"""Words past which a record's share is scaled down; ``None``: never (today)."""
FUSED = (0.3, 0.33, 0.36, 0.4, None)
"""Fused floors; ``None``: none (today)."""
EVERY = 1_000_000

Cell = tuple[float, int | None, float | None]
Search = Callable[..., list[LookupHit]]


def _order(cell: Cell) -> tuple[float, float, float]:
    share, pivot, fused = cell
    return (share, math.inf if pivot is None else pivot, math.inf if fused is None else fused)


def _variant(original: Search, pivot: int | None, fused: float | None) -> Search:
    """``lookup.search`` with every learning and pattern measured, then admitted and ranked on
    the scaled share (and the fused floor); pool candidates as before (by their words)."""

    def search(layout: Any, query: str, **kw: Any) -> list[LookupHit]:
        limit, floor = kw.pop("limit"), kw.pop("min_relevance")
        if kw.get("cosines") is None or kw.get("min_title_cosine") != kw.get("min_cosine"):
            return original(layout, query, limit=limit, min_relevance=floor, **kw)
        every = original(layout, query, limit=EVERY, min_relevance=0.0, **kw)
        wanted = len(words(query))
        kept = []
        for hit in every:
            cosine = hit.cosine if hit.cosine is not None else 0.0
            # The share back from the rounded fused relevance: a whole number of the query's words.
            share = round((2 * hit.relevance - max(0.0, cosine)) * wanted) / wanted
            if hit.kind == "candidate":
                if share >= floor:
                    kept.append(hit)
                continue
            if pivot is not None:
                share *= min(1.0, math.sqrt(pivot / max(1, len(hit.text.split()))))
            relevance = fused_relevance(share, cosine)
            near = cosine >= kw["min_cosine"]
            if share >= floor or near or (fused is not None and relevance >= fused):
                score = relevance * (1.0 + LAMBDA * (hit.utility - 0.5))
                kept.append(replace(hit, relevance=round(relevance, 4), score=round(score, 4)))
        kept.sort(key=lambda h: (-h.score, -h.utility, h.path))
        return kept[:limit]

    return search


def main() -> None:
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig(dense_model=DenseModel.WORDLLAMA)
    memory = injection_floors(config).memory
    original = lookup.search
    grid: list[Cell] = list(itertools.product(SHARE, PIVOT, FUSED))
    ok: dict[Cell, list[bool]] = {}
    queries: list[tuple[str, bool]] = []
    for cell in grid:
        stores.lookup_search = _variant(original, cell[1], cell[2])
        figures = evaluate_cross_store(labels, "tune", config, Floors(cell[0], memory))
        ok[cell] = [bool(d["ok"]) for d in figures.details]
        queries = [(str(d["workspace"]), bool(d["relevant"])) for d in figures.details]
    stores.lookup_search = original
    workspaces = sorted({w for w, _ in queries})
    per_fold: dict[str, Any] = {}
    pooled = {"top3": [0, 0], "abstain": [0, 0]}
    for left in workspaces:
        train = [i for i, (w, _) in enumerate(queries) if w != left]
        best = max(grid, key=lambda g: (_score(ok[g], queries, train), _order(g)))
        test = [i for i, (w, _) in enumerate(queries) if w == left]
        _pool(pooled, ok[best], queries, test)
        per_fold[left] = {
            "chosen": "/".join(map(str, best)),
            "left_out_ok": f"{sum(ok[best][i] for i in test)}/{len(test)}",
        }
    everywhere = list(range(len(queries)))
    best_all = max(grid, key=lambda g: (_score(ok[g], queries, everywhere), _order(g)))
    out: dict[str, Any] = {
        "queries": len(queries),
        "left_out": {k: f"{h}/{t}" for k, (h, t) in pooled.items()},
        "per_fold": per_fold,
        "best_on_all_tune": "/".join(map(str, best_all)),
        "per_cell": {
            "/".join(map(str, g)): {
                "all": _rates(ok[g], queries),
                **{
                    w: _rates(
                        [ok[g][i] for i, q in enumerate(queries) if q[0] == w],
                        [q for q in queries if q[0] == w],
                    )
                    for w in workspaces
                },
            }
            for g in grid
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
