"""A learned relevance for injection from every store, judged leaving one workspace out.

Reads the candidate rows ``relevance_features.py`` writes (every record every store offers a
labelled cross-store query under relaxed flywheel and memory floors, with its measures), fits
an L2-regularised logistic regression (numpy only) of "this candidate is a labelled relevant
record" over per-candidate features, and decides injection with it: candidates ranked by the
model's probability, those at or above a floor ``tau`` injected (none: silence). For every
workspace, the weights are fitted on the other workspaces' queries and ``tau`` is chosen on
those workspaces' own leave-one-workspace-out predictions (nested: the floor is never chosen
on predictions of queries the weights were fitted on) by the mean of the top-3 reach and the
silence rate (ties to the higher floor); then the left-out workspace is judged. Today's rule
is read from the same rows (``today_ok``: what ``federated.inject.prepare`` showed).

    python eval/knowledge/relevance_features.py > rows.json
    python eval/knowledge/fit_relevance.py rows.json [--variant NAME] [--write weights.json]

``--variant`` one of the :func:`features` variants (``all``: those of WordLlama's rows; the
:data:`DENSE_VARIANTS` read rows written with ``relevance_features.py --extra``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

TOP_K = 3
OR_TODAY = False
L2 = 1.0
KINDS = ("knowledge", "flywheel", "candidate", "memory")

Query = dict[str, Any]
Row = dict[str, Any]


def _near(row: Row) -> float:
    tcos = row["tcos"]
    return float(row["cos"]) if tcos is None else max(float(row["cos"]), float(tcos))


def features(query: Query, variant: str) -> tuple[np.ndarray, list[str]]:
    """One row of features per candidate of ``query`` (their names beside)."""
    rows = query["candidates"]
    if not rows:
        return np.zeros((0, 0)), []
    share = np.array([float(r["share"]) for r in rows])
    cos = np.array([float(r["cos"]) for r in rows])
    tcos = np.array([float(r["tcos"]) if r["tcos"] is not None else float(r["cos"]) for r in rows])
    near = np.array([_near(r) for r in rows])
    length = np.log1p(np.array([float(r["words"]) for r in rows]))
    rank = np.array([float(r["rank"]) for r in rows])
    position = np.array([float(r["position"]) for r in rows])
    qwords = float(rows[0]["qwords"]) or 1.0
    cols: dict[str, np.ndarray] = {"share": share, "cos": cos, "tcos": tcos}
    if variant in DENSE_VARIANTS:
        return _dense(query, variant, cols)
    if variant == "rare":
        cols["rare"] = np.array([float(r["rare"]) for r in rows])
    if variant not in ("min", "rare"):
        cols["len"] = length
    if variant not in ("min", "rare", "len"):
        cols["share_x_len"] = share * length
    if variant in ("full", "rel", "rank"):
        cols["inv_rank"] = 1.0 / rank
        cols["inv_position"] = 1.0 / position
    if variant in ("full", "rel"):

        def others_best(values: np.ndarray) -> np.ndarray:
            out = np.empty_like(values)
            for i in range(len(values)):
                rest = np.delete(values, i)
                out[i] = rest.max() if rest.size else 0.0
            return out

        cols["near_gap"] = near - others_best(near)
        cols["share_gap"] = share - others_best(share)
        cols["cos_z"] = (cos - cos.mean()) / (cos.std() + 0.05)
        cols["inv_qwords"] = np.full(len(rows), 1.0 / qwords)
    if variant == "full":
        for kind in KINDS[:-1]:
            cols[f"is_{kind}"] = np.array([1.0 if r["kind"] == kind else 0.0 for r in rows])
        cols["stores"] = np.array([float(len(r["kinds"])) for r in rows])
    names = list(cols)
    return np.stack([cols[n] for n in names], axis=1), names


DENSE_VARIANTS = ("minilm", "minilm_use", "minilm_add", "use", "use_add", "use_foreign")
"""The shipped variant's four measures with the cosines of the other packaged models beside or
instead of WordLlama's (rows written by ``relevance_features.py --extra``): ``minilm``
replaces the text and title cosines by MiniLM's, ``minilm_use`` adds the multilingual model's
to that, ``minilm_add`` adds MiniLM's beside WordLlama's; ``use`` and ``use_add`` likewise with
the multilingual model (universal-sentence-encoder-multilingual), and ``use_foreign`` raises
WordLlama's cosines to the multilingual model's where the task holds a letter outside ASCII (a
Portuguese, Japanese or Chinese task against English records). docs/QUALITY.md, "Issue 26: the
packaged MiniLM and multilingual cosines in the learned relevance, left out"."""


def _column(rows: Sequence[Row], name: str, fallback: str | None = None) -> np.ndarray:
    """One of the further models' cosines per candidate (a title's: its text's when untitled)."""
    values = []
    for row in rows:
        value = row.get(name)
        if value is None and fallback is not None:
            value = row[fallback]
        if value is None:
            raise KeyError(f"rows lack {name!r}: write them with relevance_features.py --extra")
        values.append(float(value))
    return np.array(values)


def _dense(query: Query, variant: str, cols: dict[str, np.ndarray]) -> tuple[np.ndarray, list[str]]:
    rows = query["candidates"]
    cols["rare"] = np.array([float(r["rare"]) for r in rows])
    if variant.startswith("minilm"):
        lcos, ltcos = _column(rows, "lcos"), _column(rows, "ltcos", "lcos")
        if variant == "minilm_add":
            cols["lcos"], cols["ltcos"] = lcos, ltcos
        else:
            cols["cos"], cols["tcos"] = lcos, ltcos
    if variant in ("minilm_use", "use", "use_add", "use_foreign"):
        mcos, mtcos = _column(rows, "mcos"), _column(rows, "mtcos", "mcos")
        if variant == "use":
            cols["cos"], cols["tcos"] = mcos, mtcos
        elif variant == "use_foreign":
            if any(c.isalpha() and not c.isascii() for c in query["text"]):
                cols["cos"] = np.maximum(cols["cos"], mcos)
                cols["tcos"] = np.maximum(cols["tcos"], mtcos)
        else:
            cols["mcos"], cols["mtcos"] = mcos, mtcos
    names = list(cols)
    return np.stack([cols[n] for n in names], axis=1), names


def fit(
    x: np.ndarray, y: np.ndarray, l2: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardise, then logistic regression by Newton's method (weights, mean, scale)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    ridge = np.full(z.shape[1], L2 if l2 is None else l2)
    ridge[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        grad = z.T @ (p - y) + ridge * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(ridge) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w, mean, scale


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    w, mean, scale = model
    if x.size == 0:
        return np.zeros(0)
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    return 1.0 / (1.0 + np.exp(-z @ w))


def _judged(row: Row) -> bool:
    """Whether the model decides this candidate: a learning, pattern or pool candidate (the
    flywheel's records, which most of the workspaces hold). A knowledge entry keeps its
    store's calibrated floors and a memory note today's floors: memory is held by one
    workspace only, so no left-out fold could learn its scale."""
    return (
        not row["forced"]
        and row["kind"] in ("flywheel", "candidate")
        and row["kinds"] == [row["kind"]]
    )


def _passes(row: Row) -> bool:
    """A candidate the model does not judge that today's rule injects."""
    return not _judged(row) and bool(row.get("admitted_today", True))


def shown(query: Query, probs: np.ndarray, tau: float) -> list[int]:
    """The candidates injected, best first: the knowledge store's and those of the other
    stores the model keeps (probability at least ``tau``); each store's kept findings ranked
    by the model (the knowledge store's by its own rank), then fused across stores by
    reciprocal rank as ``federated.fuse`` fuses, ties to the higher probability."""
    rows = query["candidates"]
    kept = [
        i
        for i in range(len(rows))
        if _passes(rows[i])
        or (_judged(rows[i]) and (probs[i] >= tau or (OR_TODAY and rows[i]["admitted_today"])))
    ]
    by_store: dict[str, list[int]] = {}
    for i in kept:
        by_store.setdefault(rows[i]["store"], []).append(i)
    score: dict[int, float] = {}
    for store, members in by_store.items():
        if store in ("swarm", "hive"):
            members.sort(key=lambda i: rows[i]["rank"])
        else:
            members.sort(key=lambda i: -probs[i])
        for rank, i in enumerate(members, 1):
            score[i] = 1.0 / (60 + rank)
    ordered = sorted(kept, key=lambda i: (-score[i], -probs[i]))
    return _rendered(query, ordered)


def _rendered(query: Query, ordered: list[int]) -> list[int]:
    """What ``federated.inject.render`` shows of ``ordered`` under the query's budget: whole
    records while they fit (one that does not is skipped for the next), a record too long for
    any block taken at the cost of its shortest cut when that fits (the room the others leave
    is given back to it afterwards, which changes nothing shown)."""
    rows = query["candidates"]
    size = empty = int(query["empty"])
    out: list[int] = []
    for i in ordered:
        if len(out) >= int(query["max_entries"]):
            break
        row = rows[i]
        if not row["safe"]:
            continue
        cost = int(row["cost"])
        if size + cost > int(query["max_chars"]):
            if empty + cost <= int(query["max_chars"]):
                continue
            if size + int(row["least_cost"]) > int(query["max_chars"]):
                continue
            cost = int(row["least_cost"])
        out.append(i)
        size += cost
    return out


def judge(query: Query, probs: np.ndarray, tau: float) -> bool:
    """Reach (a relevant record in the top 3 injected) or silence (nothing injected)."""
    rows = query["candidates"]
    top = shown(query, probs, tau)
    if query["has_relevant"]:
        return any(rows[i]["relevant"] for i in top[:TOP_K])
    return not top


def rates(oks: Sequence[bool], queries: Sequence[Query]) -> tuple[int, int, int, int]:
    reach = sum(ok for ok, q in zip(oks, queries, strict=True) if q["has_relevant"])
    reach_n = sum(q["has_relevant"] for q in queries)
    silent = sum(ok for ok, q in zip(oks, queries, strict=True) if not q["has_relevant"])
    return reach, reach_n, silent, len(queries) - reach_n


SILENCE_WEIGHT = 1.0
"""What the silence rate counts for against the reach rate when the floor is chosen (``1``: the
mean of the two; ``--silence-weight`` tries others)."""


def _objective(oks: Sequence[bool], queries: Sequence[Query]) -> float:
    r, rn, s, sn = rates(oks, queries)
    return (r / rn if rn else 0.0) + SILENCE_WEIGHT * (s / sn if sn else 0.0)


Design = Callable[[Query], np.ndarray]


def lowo_probs(queries: Sequence[Query], design: Design) -> list[np.ndarray]:
    """Each query's candidate probabilities from weights fitted without its workspace."""
    spaces = sorted({q["workspace"] for q in queries})
    out: list[np.ndarray] = [np.zeros(0)] * len(queries)
    for left in spaces:
        train = [q for q in queries if q["workspace"] != left]
        model = _fit_on(train, design)
        for i, q in enumerate(queries):
            if q["workspace"] == left:
                out[i] = predict(model, design(q))
    return out


def _fit_on(queries: Sequence[Query], design: Design) -> tuple[np.ndarray, ...]:
    xs, ys = [], []
    for q in queries:
        if not q["candidates"]:
            continue
        judged = [i for i, r in enumerate(q["candidates"]) if _judged(r)]
        xs.append(design(q)[judged])
        ys.append(np.array([float(q["candidates"][i]["relevant"]) for i in judged]))
    return fit(np.vstack(xs), np.concatenate(ys))


def choose_tau(queries: Sequence[Query], probs: Sequence[np.ndarray]) -> float:
    grid = sorted({float(p) for ps in probs for p in ps} | {1.01})
    best, best_score = 1.01, -1.0
    for tau in grid:
        oks = [judge(q, p, tau) for q, p in zip(queries, probs, strict=True)]
        score = _objective(oks, queries)
        if score > best_score + 1e-12 or (abs(score - best_score) <= 1e-12 and tau > best):
            best, best_score = tau, score
    return best


def evaluate(queries: list[Query], variant: str) -> dict[str, Any]:
    design: Design = lambda q: features(q, variant)[0]  # noqa: E731
    spaces = sorted({q["workspace"] for q in queries})
    model_ok: list[bool] = [False] * len(queries)
    taus: dict[str, float] = {}
    for left in spaces:
        train = [q for q in queries if q["workspace"] != left]
        inner = lowo_probs(train, design)
        tau = choose_tau(train, inner)
        taus[left] = round(tau, 4)
        model = _fit_on(train, design)
        for i, q in enumerate(queries):
            if q["workspace"] == left:
                model_ok[i] = judge(q, predict(model, design(q)), tau)
    today_ok = [bool(q["today_ok"]) for q in queries]
    table: dict[str, Any] = {}
    for scope in [*spaces, "tune", "held", "all"]:
        idx = [i for i, q in enumerate(queries) if scope in (q["workspace"], q["split"], "all")]
        sub = [queries[i] for i in idx]
        t = rates([today_ok[i] for i in idx], sub)
        m = rates([model_ok[i] for i in idx], sub)
        table[scope] = {
            "today": f"{t[0]}/{t[1]} reach, {t[2]}/{t[3]} silent",
            "model": f"{m[0]}/{m[1]} reach, {m[2]}/{m[3]} silent",
        }
    return {"variant": variant, "tau_per_fold": taus, "table": table}


SHIPPED = "rare"
"""The variant ``swarmq.flywheel.relevance.LearnedRelevance`` reads: share, text cosine, title
cosine and the rarity-weighted share (docs/QUALITY.md, "Issue 26: reach misses left one
workspace out, by cause"; ``min``, without the last, shipped before)."""
WEIGHTS = {
    "min": ("share", "cosine", "title"),
    "rare": ("share", "cosine", "title", "rare"),
    "minilm": ("share", "cosine", "title", "rare"),
}
"""Each shippable variant's columns, as ``LearnedRelevance`` names their weights (``minilm``:
the shipped variant's on MiniLM's cosines, a relevance for that model)."""


def raw_model(queries: Sequence[Query], variant: str = SHIPPED) -> dict[str, float]:
    """Weights fitted on ``queries`` and the floor chosen on their own leave-one-workspace-out
    predictions, on the raw scale ``swarmq.flywheel.relevance.LearnedRelevance`` reads, by its
    field names (``LearnedRelevance(**raw_model(q))``)."""

    def design(q: Query) -> np.ndarray:
        return features(q, variant)[0]

    tau = choose_tau(queries, lowo_probs(queries, design))
    w, mean, scale = _fit_on(queries, design)
    raw = w[1:] / scale
    return {
        "intercept": float(w[0] - raw @ mean),
        **{name: float(v) for name, v in zip(WEIGHTS[variant], raw, strict=True)},
        "floor": tau,
    }


def final_model(queries: list[Query], variant: str = SHIPPED) -> dict[str, Any]:
    """The shipped model: the mean of the leave-one-workspace-out fold models (each fitted and
    floored without one workspace), which is what the left-out figures judge; a single fit on
    every workspace put its floor at 0.36 where the folds average 0.31 and ranked two fixflags
    tasks' long learnings first (docs/QUALITY.md)."""
    spaces = sorted({q["workspace"] for q in queries})
    folds = {w: raw_model([q for q in queries if q["workspace"] != w], variant) for w in spaces}
    names = list(next(iter(folds.values())))
    return {
        "variant": variant,
        "l2": L2,
        "model": {n: float(np.mean([f[n] for f in folds.values()])) for n in names},
        "folds": folds,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("rows", type=Path)
    parser.add_argument("--variant", default="all")
    parser.add_argument("--write", type=Path)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--or-today", action="store_true")
    parser.add_argument("--silence-weight", type=float, default=1.0)
    args = parser.parse_args()
    queries: list[Query] = json.loads(args.rows.read_text("utf-8"))
    global L2, OR_TODAY, SILENCE_WEIGHT
    L2 = args.l2
    OR_TODAY = args.or_today
    SILENCE_WEIGHT = args.silence_weight
    variants = (
        ["min", "rare", "len", "base", "rank", "rel", "full"]
        if args.variant == "all"
        else [args.variant]
    )
    for variant in variants:
        print(json.dumps(evaluate(queries, variant)))
    if args.write:
        shipped = SHIPPED if args.variant == "all" else args.variant
        args.write.write_text(json.dumps(final_model(queries, shipped), indent=1) + "\n")


if __name__ == "__main__":
    main()
