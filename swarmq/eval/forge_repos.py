"""Does a forge change generalise? Figures by source repository, and a threshold sweep whose
choice is checked by leaving one repository out.

A rule written while reading one user's sessions fits that user's habits and templates; the
held-out split shows it only once, at the end. These reports show it on ``tune`` itself: the
counts of each repository separately (a change should help several, not one), a comparison with a
saved earlier run repository by repository, and a precision/recall sweep of ``min_confidence``
in which, for each repository in turn, the threshold is chosen on the *other* repositories and
scored on the one left out (leave-one-repository-out). The gap between the in-sample best and the
left-out figure is what the tuning itself overfits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.eval.forge import ForgeEvaluation, LabelsError, evaluate
from swarmq.eval.metrics import Counts
from swarmq.forge.config import ForgeConfig

THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
"""The ``min_confidence`` values a sweep tries (the classifier's confidences move in 0.05 steps)."""


@dataclass(frozen=True)
class Fold:
    """One repository left out: the threshold the others chose and what it gives on this one."""

    repo: str
    chosen: float
    counts: Counts


@dataclass(frozen=True)
class Sweep:
    points: tuple[tuple[float, ForgeEvaluation], ...]
    folds: tuple[Fold, ...]

    @property
    def left_out(self) -> Counts:
        """The leave-one-repository-out total: every repository scored at a threshold it did not choose."""
        return sum((f.counts for f in self.folds), Counts())

    def as_dict(self) -> dict[str, Any]:
        return {
            "points": [{"min_confidence": t, **ev.overall.as_dict()} for t, ev in self.points],
            "folds": [
                {"repo": f.repo, "chosen": f.chosen, **f.counts.as_dict()} for f in self.folds
            ],
            "left_out": self.left_out.as_dict(),
        }


def _without(evaluation: ForgeEvaluation, repo: str) -> Counts:
    return sum((c for r, c in evaluation.by_repo().items() if r != repo), Counts())


def sweep(
    labels: Path,
    *,
    split: str = "tune",
    thresholds: tuple[float, ...] = THRESHOLDS,
    config: ForgeConfig | None = None,
) -> Sweep:
    """Evaluate ``split`` at each threshold (a full forge run each: exact, not a re-filtering of
    one run, since what is accepted also feeds the workspace's memory of seen passages), then
    choose, for each repository, the threshold with the best F1 on the others (ties: the one
    nearest the default) and score the left-out repository with it."""
    base = config or ForgeConfig()
    points = tuple(
        (t, evaluate(labels, split=split, config=base.model_copy(update={"min_confidence": t})))
        for t in thresholds
    )
    if not points:
        raise LabelsError("a sweep needs at least one threshold")
    repos = sorted(points[0][1].by_repo())
    folds = []
    for repo in repos:
        chosen, evaluation = max(
            points,
            key=lambda p: (round(_without(p[1], repo).f1, 6), -abs(p[0] - base.min_confidence)),
        )
        folds.append(Fold(repo, chosen, evaluation.by_repo().get(repo, Counts())))
    return Sweep(points, tuple(folds))


@dataclass(frozen=True)
class RepoChange:
    repo: str
    before: Counts
    after: Counts

    @property
    def verdict(self) -> str:
        """``better`` / ``worse`` / ``mixed`` / ``same``: more hits and fewer false positives are
        both improvements; a change that trades one for the other is mixed."""
        gain = (self.after.tp - self.before.tp, self.before.fp - self.after.fp)
        if gain == (0, 0):
            return "same"
        if min(gain) >= 0:
            return "better"
        if max(gain) <= 0:
            return "worse"
        return "mixed"


def compare(before: dict[str, Any], after: ForgeEvaluation) -> list[RepoChange]:
    """Repository by repository, a saved ``--json`` run (``before``) against this one."""
    saved = before.get("by_repo")
    if not isinstance(saved, dict):
        raise LabelsError(
            "the baseline has no 'by_repo' figures: save it with --json from this version"
        )
    now = after.by_repo()
    out = []
    for repo in sorted(set(saved) | set(now)):
        old = saved.get(repo) or {}
        out.append(
            RepoChange(
                repo,
                Counts(int(old.get("tp", 0)), int(old.get("fp", 0)), int(old.get("fn", 0))),
                now.get(repo, Counts()),
            )
        )
    return out
