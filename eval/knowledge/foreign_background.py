"""Whether a floor per workspace helps the learned relevance: each examined workspace is asked
every other examined workspace's task texts (tasks foreign to its stores, none of them relevant
there), and the model's best probability among its learnings and patterns over those foreign
tasks is the workspace's background. The floor is then moved by that background, in logit
terms, ``logit(p) - c * logit(background)`` against one fitted threshold, so a store whose
records score high for any task needs more, and one whose records score low for foreign tasks
needs less. Judged leaving one workspace out as ``fit_relevance.py`` judges (weights, ``c`` and
the threshold chosen on the other workspaces' own left-out predictions; a left-out workspace's
tasks are in no background of its fold).

    python eval/knowledge/relevance_features.py > rows.json
    python eval/knowledge/foreign_background.py rows.json --write-foreign foreign.json
    python eval/knowledge/foreign_background.py rows.json --foreign foreign.json [--quantile Q]

docs/QUALITY.md, "Issue 26: a floor per workspace from foreign tasks, refuted".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from fit_relevance import (  # this folder's sibling scripts
    SHIPPED,
    Query,
    _fit_on,
    _judged,
    _objective,
    choose_tau,
    features,
    judge,
    predict,
    rates,
)
from relevance_features import EXAMINED, HERE, _corpus, candidate_rows

from swarmq.eval.cross_store import load_cross_store_labels, workspace_stores
from swarmq.knowledge.config import KnowledgeConfig

SCALES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The ``c`` tried per fold (0: one floor for every workspace, the shipped rule)."""


def write_foreign() -> list[dict[str, Any]]:
    """Every examined workspace's candidate rows for every other examined workspace's tasks."""
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig()
    out: list[dict[str, Any]] = []
    for name, workspace in sorted(labels.workspaces.items()):
        if name not in EXAMINED:
            continue
        foreign = [
            q for q in labels.queries if q["workspace"] in EXAMINED and q["workspace"] != name
        ]
        with workspace_stores(workspace, config) as stores:
            corpus = _corpus(stores)
            for query in foreign:
                rows = candidate_rows(stores, query["text"], config, corpus)
                out.append({"workspace": name, "from": query["workspace"], "candidates": rows})
        print(name, len(foreign), file=sys.stderr)
    return out


def _logit(p: np.ndarray | float) -> Any:
    q = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(q / (1 - q))


def _design(q: Query) -> np.ndarray:
    return features(q, SHIPPED)[0]


class Backgrounds:
    def __init__(self, foreign: list[Query], quantile: float) -> None:
        self.foreign = [f for f in foreign if f["candidates"]]
        self.quantile = quantile

    def of(self, model: Any, workspace: str, exclude: set[str]) -> float:
        """The quantile of the model's best judged probability over the foreign tasks."""
        best = []
        for f in self.foreign:
            if f["workspace"] != workspace or f["from"] in exclude:
                continue
            probs = predict(model, _design(f))
            judged = [probs[i] for i, r in enumerate(f["candidates"]) if _judged(r)]
            best.append(max(judged, default=0.0))
        return float(np.quantile(best, self.quantile)) if best else 0.5


def _adjusted(probs: np.ndarray, background: float, scale: float) -> np.ndarray:
    return probs if not probs.size else _logit(probs) - scale * _logit(background)


def evaluate(rows: list[Query], backgrounds: Backgrounds) -> dict[str, Any]:
    spaces = sorted({q["workspace"] for q in rows})
    oks: list[bool] = []
    judged: list[Query] = []
    folds: dict[str, Any] = {}
    for left in spaces:
        train = [q for q in rows if q["workspace"] != left]
        inner: list[np.ndarray] = [np.zeros(0)] * len(train)
        inner_bg: dict[str, float] = {}
        for w in sorted({q["workspace"] for q in train}):
            model = _fit_on([q for q in train if q["workspace"] != w], _design)
            inner_bg[w] = backgrounds.of(model, w, {left, w})
            for i, q in enumerate(train):
                if q["workspace"] == w:
                    inner[i] = predict(model, _design(q))
        best: tuple[float, float, float] | None = None
        for scale in SCALES:
            s = [
                _adjusted(p, inner_bg[q["workspace"]], scale)
                for q, p in zip(train, inner, strict=True)
            ]
            tau = choose_tau(train, s)
            score = _objective([judge(q, x, tau) for q, x in zip(train, s, strict=True)], train)
            if best is None or score > best[0] + 1e-12:
                best = (score, scale, tau)
        assert best is not None
        _, scale, tau = best
        model = _fit_on(train, _design)
        background = backgrounds.of(model, left, {left})
        test = [q for q in rows if q["workspace"] == left]
        for q in test:
            oks.append(judge(q, _adjusted(predict(model, _design(q)), background, scale), tau))
            judged.append(q)
        folds[left] = {"scale": scale, "background": round(background, 3)}
    r = rates(oks, judged)
    return {"reach": f"{r[0]}/{r[1]}", "silent": f"{r[2]}/{r[3]}", "folds": folds}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("rows", type=Path)
    parser.add_argument("--foreign", type=Path)
    parser.add_argument("--write-foreign", type=Path)
    parser.add_argument("--quantile", type=float, default=0.9)
    args = parser.parse_args()
    if args.write_foreign:
        args.write_foreign.write_text(json.dumps(write_foreign()), "utf-8")
        return
    if args.foreign is None:
        parser.error("--foreign FILE is needed (write one first with --write-foreign FILE)")
    rows = json.loads(args.rows.read_text("utf-8"))
    foreign = json.loads(args.foreign.read_text("utf-8"))
    print(json.dumps(evaluate(rows, Backgrounds(foreign, args.quantile))))


if __name__ == "__main__":
    main()
