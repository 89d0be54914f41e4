"""Precision, recall and hit rates, additive so per-format figures sum to the overall one."""

from __future__ import annotations

from dataclasses import dataclass


def ratio(numerator: int, denominator: int) -> float:
    """A rate that is 0.0, not an error, when nothing was counted (reports print the counts too)."""
    return numerator / denominator if denominator else 0.0


@dataclass(frozen=True)
class Counts:
    """True positives, false positives and false negatives of one evaluation slice."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        return ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass(frozen=True)
class HitRate:
    """How many of ``total`` cases met their criterion (top-k hit, correct abstention, ...)."""

    hits: int = 0
    total: int = 0

    def __add__(self, other: HitRate) -> HitRate:
        return HitRate(self.hits + other.hits, self.total + other.total)

    @property
    def rate(self) -> float:
        return ratio(self.hits, self.total)

    def as_dict(self) -> dict[str, float | int]:
        return {"hits": self.hits, "total": self.total, "rate": round(self.rate, 4)}
