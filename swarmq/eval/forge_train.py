"""A learned scorer for the user passages forge rejects, measured leaving one repository out.

    python -m swarmq.eval.forge_train [--labels eval/forge/labels.yaml] [--ceiling]

Rows are the user passages the keyword classifier rejected (:mod:`swarmq.eval.forge_requests`),
each labelled by whether it matches a lesson of its session (the eval's matching rule). The
model is a class-weighted, L2-regularised logistic regression (numpy, training only).
Leave-one-repository-out (LORO): for each repository, a model is trained on the others, its
threshold chosen on their own out-of-fold probabilities (one inner model per other repository;
"keep none" is one of the choices), and forge's candidates plus the scorer's are scored on the
left-out repository; the folds are summed and compared with forge alone. ``--ceiling`` reports
where recall is lost instead (:mod:`swarmq.eval.forge_ceiling`).
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from swarmq.eval.forge import LabelledSession, load_labels, score
from swarmq.eval.forge_requests import FEATURES, user_passages
from swarmq.eval.metrics import Counts
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks

GRID = tuple(round(0.05 * i, 2) for i in range(4, 20))
"""Probability thresholds 0.20 ... 0.95."""
THRESHOLDS = (*GRID, 0.97, 0.99, 1.01)
"""What a fold may choose; 1.01 keeps nothing (the scorer off)."""
L2 = 1.0
POSITIVE_WEIGHT = 10.0


@dataclass
class SessionRows:
    session: LabelledSession
    base: list[str]
    """The contents forge keeps without the scorer (default settings, one shared workspace)."""
    texts: list[str] = field(default_factory=list)
    vectors: list[list[float]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)


def collect(labels: Path, config: ForgeConfig | None = None) -> list[SessionRows]:
    """Forge every session in file order as the eval does (default settings unless ``config``),
    and gather the passages a scorer would read, with their features and labels."""
    sessions = sorted(load_labels(labels), key=lambda s: s.file.name)
    config = config or ForgeConfig()
    out = []
    with tempfile.TemporaryDirectory(prefix="swarmq-forge-train-") as scratch:
        layout = AgentsLayout(Path(scratch) / "project" / ".agents")
        locks = LocalLocks(Path(scratch) / "locks")
        for session in sessions:
            result = forge_transcript(session.file, layout, locks, config, force=True)
            rows = SessionRows(session, [c.content for c in result.found])
            for text, vector in user_passages(session.file, config):
                rows.texts.append(text)
                rows.vectors.append(vector)
                rows.labels.append(int(any(lesson.matches(text) for lesson in session.lessons)))
            out.append(rows)
    return out


def fit(rows: Iterable[SessionRows]) -> tuple[np.ndarray, float]:
    """L2-regularised, class-weighted logistic regression by full-batch gradient descent."""
    listed = [r for r in rows if r.vectors]
    x = np.array([v for r in listed for v in r.vectors], dtype=float)
    y = np.array([lab for r in listed for lab in r.labels], dtype=float)
    if not len(y) or y.sum() == 0:
        return np.zeros(len(FEATURES)), -10.0
    sample = np.where(y > 0, POSITIVE_WEIGHT, 1.0)
    sample /= sample.sum()
    w, b = np.zeros(x.shape[1]), 0.0
    rate = 0.5
    for _ in range(1500):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w + b, -30, 30)))
        g = sample * (p - y)
        w -= rate * (x.T @ g + L2 * w / len(y))
        b -= rate * float(g.sum())
    return w, b


def _prob(w: np.ndarray, b: float, rows: SessionRows) -> list[float]:
    if not rows.vectors:
        return []
    z = np.array(rows.vectors, dtype=float) @ w + b
    return [1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, float(v))))) for v in z]


def pipeline(rows: SessionRows, probs: list[float] | None, threshold: float) -> Counts:
    """The session's counts with the scorer's passages at ``threshold`` added (None: scorer off)."""
    extra = [t for t, p in zip(rows.texts, probs, strict=True) if p >= threshold] if probs else []
    contents = list(dict.fromkeys([*rows.base, *extra]))
    return score(rows.session, ({"content": c} for c in contents)).counts


def _best_threshold(
    rows: list[SessionRows], probs: list[list[float]], *, forced: bool = False
) -> float:
    """The threshold with the best F1 of forge plus the scorer on ``rows`` (ties: the higher);
    ``forced``: one that keeps something (to see what the scorer costs when it must act)."""

    def f1(t: float) -> tuple[float, float]:
        total = sum((pipeline(r, p, t) for r, p in zip(rows, probs, strict=True)), Counts())
        return (round(total.f1, 6), t)

    return max(GRID if forced else THRESHOLDS, key=f1)


def _out_of_fold(rows: list[SessionRows]) -> list[list[float]]:
    """Each session's probabilities from a model trained without its repository."""
    probs: list[list[float]] = [[] for _ in rows]
    for repo in sorted({r.session.repo for r in rows}):
        w, b = fit(r for r in rows if r.session.repo != repo)
        for i, r in enumerate(rows):
            if r.session.repo == repo:
                probs[i] = _prob(w, b, r)
    return probs


@dataclass(frozen=True)
class Loro:
    before: Counts
    after: Counts
    by_format: dict[str, tuple[Counts, Counts]]
    by_repo: dict[str, tuple[Counts, Counts, float]]


def loro(rows: list[SessionRows], *, forced: bool = False) -> Loro:
    """Before (scorer off) and after (each repository scored by a model and threshold chosen
    without it), summed over the repositories."""
    by_format: dict[str, tuple[Counts, Counts]] = {}
    by_repo: dict[str, tuple[Counts, Counts, float]] = {}
    for repo in sorted({r.session.repo for r in rows}):
        train = [r for r in rows if r.session.repo != repo]
        threshold = _best_threshold(train, _out_of_fold(train), forced=forced)
        w, b = fit(train)
        before = after = Counts()
        for r in rows:
            if r.session.repo != repo:
                continue
            old, new = pipeline(r, None, 1.0), pipeline(r, _prob(w, b, r), threshold)
            before, after = before + old, after + new
            fb, fa = by_format.get(r.session.format, (Counts(), Counts()))
            by_format[r.session.format] = (fb + old, fa + new)
        by_repo[repo] = (before, after, threshold)
    total_b = sum((v[0] for v in by_repo.values()), Counts())
    total_a = sum((v[1] for v in by_repo.values()), Counts())
    return Loro(total_b, total_a, dict(sorted(by_format.items())), by_repo)


def auc(rows: list[SessionRows]) -> float:
    """How well out-of-fold probabilities rank the passages that match a lesson above those that
    do not (0.5: no better than chance)."""
    probs = [p for ps in _out_of_fold(rows) for p in ps]
    labels = [lab for r in rows for lab in r.labels]
    pos = [p for p, lab in zip(probs, labels, strict=True) if lab]
    neg = [p for p, lab in zip(probs, labels, strict=True) if not lab]
    if not pos or not neg:
        return 0.5
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def _line(name: str, c: Counts) -> str:
    return f"{name:<34} tp {c.tp:3} fp {c.fp:3} fn {c.fn:3}  P {c.precision:.2f} R {c.recall:.2f} F1 {c.f1:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=Path("eval/forge/labels.yaml"))
    parser.add_argument("--ceiling", action="store_true", help="where recall is lost")
    parser.add_argument("--examples", action="store_true", help="with --ceiling: the passages")
    args = parser.parse_args(argv)
    if args.ceiling:
        from swarmq.eval.forge_ceiling import ceiling, render

        print(render(ceiling(args.labels), examples=args.examples))
        return
    rows = collect(args.labels)
    n = sum(len(r.labels) for r in rows)
    print(f"{n} rejected user passages, {sum(sum(r.labels) for r in rows)} match a lesson")
    print(f"out-of-fold ranking AUC (LORO models): {auc(rows):.2f}")
    result = loro(rows)
    print(_line("LORO before (scorer off)", result.before))
    print(_line("LORO after", result.after))
    for fmt, (b, a) in result.by_format.items():
        print(_line(f"  {fmt} before", b))
        print(_line(f"  {fmt} after", a))
    for repo, (b, a, t) in result.by_repo.items():
        print(f"  {repo:<28} thr {t:.2f}  tp {b.tp}->{a.tp}  fp {b.fp}->{a.fp}")
    forced = loro(rows, forced=True)
    print(_line("LORO after, scorer forced (thr<=.95)", forced.after))
    for fmt, (_, a) in forced.by_format.items():
        print(_line(f"  {fmt}", a))


if __name__ == "__main__":
    main()
