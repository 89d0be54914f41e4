"""A learned second look that reads meaning, measured leaving one labelled set out (issue 24).

    python -m swarmq.eval.forge_meaning [--dir eval/forge] [--model multilingual] [--l2 10]

Round 5 (``forge_train``) scored the user passages forge's classifier rejects with cheap features
only, on one set. This asks the same question with what a passage *means*: its sentence
embedding from a packaged local model (``multilingual``: universal-sentence-encoder-multilingual;
``minilm``; ``wordllama``; ``none``: cheap features only), reduced to ``--dims`` principal
directions fitted on each fold's training rows, beside the cheap features of
:mod:`swarmq.eval.forge_requests`. The rows are pooled over every labelled set in ``--dir``
(the blind set is never read; of a set and its ``-qa`` review, only the review).

A row is labelled 1 when it matches (the eval's word rule) a *prose* lesson of its session that
forge alone does not find, 0 when it matches no lesson, and is left out of training when it only
matches lessons forge already finds (adding it would be redundant, neither hit nor miss).
Model: class-weighted, L2-regularised logistic regression (Newton steps, numpy, training only).
Leave-one-set-out: each set is scored by a model trained on the others, its threshold chosen by
F1 of forge plus the scorer on those others' own out-of-fold probabilities (``--inner`` group
folds; "keep none" is one choice); folds summed and compared with forge alone. On 22 sets
(docs/QUALITY.md, issue 24 round 6) it did not beat forge alone with any of the three models, so
forge does not use it; it stays as the harness for the next, larger pool of labels.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from swarmq.eval.forge import LabelledSession, load_labels, score
from swarmq.eval.forge_requests import FEATURES, user_passages
from swarmq.eval.metrics import Counts
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks

Matrix = npt.NDArray[np.float64]
Embed = Callable[[Sequence[str]], npt.NDArray[np.floating]]

BLIND = ("heldout22", "heldout23")
"""The held sets no one reads before their one reading: never listed, whatever the directory
holds."""
THRESHOLDS = (*(round(0.05 * i, 2) for i in range(4, 20)), 0.97, 0.98, 0.99, 0.995, 1.01)
"""What a fold may choose (probabilities are class-weighted, so high); 1.01 keeps nothing."""
OFF = 1.01


def label_sets(directory: Path) -> list[Path]:
    """The labels files to pool: every ``labels*.yaml`` but the blind set, and of a set with a
    ``-qa`` review only the review (the two label the same sessions)."""
    names = {p.name for p in directory.glob("labels*.yaml") if not any(b in p.name for b in BLIND)}
    return [directory / n for n in sorted(names) if n.replace(".yaml", "-qa.yaml") not in names]


@dataclass
class Rows:
    """One session's base candidates and the rejected user passages a scorer would read."""

    session: LabelledSession
    group: str
    """The labelled set the session comes from: the unit left out."""
    base: list[str]
    texts: list[str] = field(default_factory=list)
    cheap: list[list[float]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    """1: matches a prose lesson forge misses; 0: matches none; -1: only lessons forge finds."""
    meaning: Matrix = field(default_factory=lambda: np.zeros((0, 0)))


def collect(sets: Sequence[Path], config: ForgeConfig | None = None) -> list[Rows]:
    """Forge each set's sessions in file order in their own scratch workspace (as the eval
    does) and gather the rejected user passages with their cheap features and labels."""
    config = config or ForgeConfig()
    out: list[Rows] = []
    for labels in sets:
        if any(b in labels.name for b in BLIND):
            raise ValueError(f"{labels.name}: the blind set is not read")
        group = labels.stem.removeprefix("labels").strip("-") or "labels"
        with tempfile.TemporaryDirectory(prefix="swarmq-forge-meaning-") as scratch:
            layout = AgentsLayout(Path(scratch) / "project" / ".agents")
            locks = LocalLocks(Path(scratch) / "locks")
            for session in sorted(load_labels(labels), key=lambda s: s.file.name):
                result = forge_transcript(session.file, layout, locks, config, force=True)
                base = [c.content for c in result.found]
                found = set(score(session, ({"content": c} for c in base)).hits)
                rows = Rows(session, group, base)
                for text, vector in user_passages(session.file, config):
                    matched = [lesson for lesson in session.lessons if lesson.matches(text)]
                    missed = [m for m in matched if m.kind == "prose" and m.text not in found]
                    rows.texts.append(text)
                    rows.cheap.append(vector)
                    rows.labels.append(1 if missed else (-1 if matched else 0))
                out.append(rows)
    return out


def embed_rows(rows: Sequence[Rows], embed: Embed | None) -> None:
    """Fill each session's ``meaning`` (one row per passage; zero columns without a model)."""
    for r in rows:
        if embed is None or not r.texts:
            r.meaning = np.zeros((len(r.texts), 0))
        else:
            r.meaning = np.asarray(embed(r.texts), dtype=np.float64)


def _stack(rows: Sequence[Rows]) -> tuple[Matrix, Matrix, npt.NDArray[np.int64]]:
    listed = [r for r in rows if r.texts]
    width = next((r.meaning.shape[1] for r in listed), 0)
    cheap = np.array([v for r in listed for v in r.cheap], dtype=np.float64)
    meaning = np.vstack([r.meaning for r in listed]) if listed else np.zeros((0, width))
    labels = np.array([y for r in listed for y in r.labels], dtype=np.int64)
    return cheap.reshape(len(labels), len(FEATURES)), meaning, labels


@dataclass(frozen=True)
class Model:
    """Weights over ``[cheap features, projected meaning, 1]``; the projection is the training
    rows' top principal directions, scaled so a typical row has unit length."""

    weights: Matrix
    mean: Matrix
    basis: Matrix

    def probabilities(self, rows: Rows) -> list[float]:
        if not rows.texts:
            return []
        x = self._design(np.array(rows.cheap, dtype=np.float64), rows.meaning)
        z = np.clip(x @ self.weights, -30.0, 30.0)
        return [float(p) for p in 1.0 / (1.0 + np.exp(-z))]

    def _design(self, cheap: Matrix, meaning: Matrix) -> Matrix:
        projected = (meaning - self.mean) @ self.basis if self.basis.size else meaning[:, :0]
        return np.hstack([cheap, projected, np.ones((len(cheap), 1))])


def fit(rows: Sequence[Rows], *, l2: float = 10.0, dims: int = 48) -> Model:
    """Class-weighted, L2-regularised logistic regression by Newton steps (rows labelled -1
    left out)."""
    cheap, meaning, labels = _stack(rows)
    keep = labels >= 0
    cheap, meaning, y = cheap[keep], meaning[keep], labels[keep].astype(np.float64)
    mean = meaning.mean(axis=0) if len(meaning) else np.zeros(meaning.shape[1])
    basis = np.zeros((meaning.shape[1], 0))
    if dims and meaning.shape[1] and len(meaning) > 1:
        _, sigma, vt = np.linalg.svd(meaning - mean, full_matrices=False)
        basis = vt[:dims].T * (np.sqrt(len(meaning)) / max(float(sigma[0]), 1e-9))
    model = Model(np.zeros(0), mean, basis)
    x = model._design(cheap, meaning)
    w = np.zeros(x.shape[1])
    if not len(y) or y.sum() == 0:
        w[-1] = -10.0
        return Model(w, mean, basis)
    sample = np.where(y > 0, (len(y) - y.sum()) / y.sum(), 1.0)
    sample /= sample.mean()
    penalty = l2 * np.eye(x.shape[1])
    penalty[-1, -1] = 1e-6
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30.0, 30.0)))
        gradient = x.T @ (sample * (p - y)) + penalty @ w
        hessian = (x * (sample * p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-7:
            break
    return Model(w, mean, basis)


class Scorer:
    """Forge plus the scorer's passages, counted per session (base counts cached)."""

    def __init__(self) -> None:
        self._base: dict[int, Counts] = {}

    def counts(self, rows: Rows, probs: Sequence[float], threshold: float) -> Counts:
        extra = [t for t, p in zip(rows.texts, probs, strict=True) if p >= threshold]
        if not extra:
            key = id(rows)
            if key not in self._base:
                self._base[key] = score(rows.session, ({"content": c} for c in rows.base)).counts
            return self._base[key]
        contents = list(dict.fromkeys([*rows.base, *extra]))
        return score(rows.session, ({"content": c} for c in contents)).counts

    def total(self, rows: Sequence[Rows], probs: Sequence[Sequence[float]], t: float) -> Counts:
        return sum((self.counts(r, p, t) for r, p in zip(rows, probs, strict=True)), Counts())


def _out_of_fold(rows: Sequence[Rows], folds: int, *, l2: float, dims: int) -> list[list[float]]:
    """Each session's probabilities from a model trained without its group (groups dealt
    round-robin into ``folds`` folds)."""
    groups = sorted({r.group for r in rows})
    probs: list[list[float]] = [[] for _ in rows]
    for k in range(min(folds, len(groups))):
        held = set(groups[k :: min(folds, len(groups))])
        model = fit([r for r in rows if r.group not in held], l2=l2, dims=dims)
        for i, r in enumerate(rows):
            if r.group in held:
                probs[i] = model.probabilities(r)
    return probs


@dataclass(frozen=True)
class Fold:
    before: Counts
    after: Counts
    threshold: float


@dataclass(frozen=True)
class LeftOut:
    auc: float
    before: Counts
    after: Counts
    folds: dict[str, Fold]
    prose_before: int
    prose_after: int
    """Prose lessons found, forge alone and with the scorer."""


def leave_one_set_out(
    rows: Sequence[Rows], *, l2: float = 10.0, dims: int = 48, inner: int = 5
) -> LeftOut:
    """Each group scored by a model and a threshold chosen without it, folds summed."""
    scorer = Scorer()
    folds: dict[str, Fold] = {}
    ranked: list[tuple[float, int]] = []
    prose = [0, 0]
    for group in sorted({r.group for r in rows}):
        train = [r for r in rows if r.group != group]
        inner_probs = _out_of_fold(train, inner, l2=l2, dims=dims)
        threshold = max(
            (*THRESHOLDS, OFF),
            key=lambda t: (round(scorer.total(train, inner_probs, t).f1, 6), t),
        )
        model = fit(train, l2=l2, dims=dims)
        before = after = Counts()
        for r in rows:
            if r.group != group:
                continue
            probs = model.probabilities(r)
            ranked += [(p, y) for p, y in zip(probs, r.labels, strict=True) if y >= 0]
            before += scorer.counts(r, probs, OFF)
            after += scorer.counts(r, probs, threshold)
            prose[0] += _prose_found(r, [])
            prose[1] += _prose_found(
                r, [t for t, p in zip(r.texts, probs, strict=True) if p >= threshold]
            )
        folds[group] = Fold(before, after, threshold)
    total_b = sum((f.before for f in folds.values()), Counts())
    total_a = sum((f.after for f in folds.values()), Counts())
    return LeftOut(_auc(ranked), total_b, total_a, folds, prose[0], prose[1])


def _prose_found(rows: Rows, extra: list[str]) -> int:
    contents = list(dict.fromkeys([*rows.base, *extra]))
    hits = set(score(rows.session, ({"content": c} for c in contents)).hits)
    return sum(
        1 for lesson in rows.session.lessons if lesson.kind == "prose" and lesson.text in hits
    )


def _auc(ranked: Sequence[tuple[float, int]]) -> float:
    """Probability that a positive row ranks above a negative one (ties count half)."""
    pos = np.array([p for p, y in ranked if y == 1])
    neg = np.array([p for p, y in ranked if y == 0])
    if not len(pos) or not len(neg):
        return 0.5
    both = np.concatenate([pos, neg])
    order = both.argsort(kind="mergesort")
    ranks = np.empty(len(both))
    sorted_values = both[order]
    _, first, counts = np.unique(sorted_values, return_index=True, return_counts=True)
    average = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(average, counts)
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def embedder(model: str) -> Embed | None:
    """The packaged model's ``embed`` (``none``: cheap features only)."""
    if model == "none":
        return None
    if model == "multilingual":
        from swarmq.similarity.multilingual import multilingual_embedder

        return multilingual_embedder().embed
    from swarmq.similarity.packaged import packaged_embedder

    return packaged_embedder(model).embed


def _line(name: str, c: Counts) -> str:
    return (
        f"{name:<30} tp {c.tp:3} fp {c.fp:3} fn {c.fn:3}  "
        f"P {c.precision:.3f} R {c.recall:.3f} F1 {c.f1:.3f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("eval/forge"))
    parser.add_argument(
        "--model", default="multilingual", choices=("multilingual", "minilm", "wordllama", "none")
    )
    parser.add_argument("--l2", type=float, default=10.0)
    parser.add_argument("--dims", type=int, default=48)
    parser.add_argument("--inner", type=int, default=5)
    args = parser.parse_args(argv)
    rows = collect(label_sets(args.dir))
    embed_rows(rows, embedder(args.model))
    labels = [y for r in rows for y in r.labels]
    print(
        f"{len(labels)} rejected user passages in {len(rows)} sessions; "
        f"{labels.count(1)} match a prose lesson forge misses, {labels.count(-1)} only found ones"
    )
    result = leave_one_set_out(rows, l2=args.l2, dims=args.dims, inner=args.inner)
    print(f"model {args.model}, l2 {args.l2}, dims {args.dims}: out-of-fold AUC {result.auc:.3f}")
    print(_line("forge alone", result.before))
    print(_line("forge + scorer (left out)", result.after))
    print(f"prose lessons found: {result.prose_before} -> {result.prose_after}")
    for group, f in result.folds.items():
        print(
            f"  {group:<14} thr {f.threshold:.3f}  tp {f.before.tp}->{f.after.tp}"
            f"  fp {f.before.fp}->{f.after.fp}  fn {f.before.fn}->{f.after.fn}"
        )


if __name__ == "__main__":
    main()
