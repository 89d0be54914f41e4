"""A learned relevance for learnings and patterns: one logistic model over a record's word share,
its text's cosine, its title's cosine and its word share with each word weighted by its rarity
among the workspace's records, that both ranks the records and decides whether any is relevant
at all.

Two floors side by side (the share floor, the cosine floors) each admit a record on one
measure alone, so a long topical learning that holds the generic words of a short task is
admitted by its share, and a title near a task in meaning on another workspace's scale by its
cosine; and the records are ranked by the plain mean of share and cosine. A model fitted on
labelled workspaces weighs the three measures against each other (a title near the task counts
two to three times the whole text's cosine, and the share less than a floor of its own allowed) and
holds one floor on the result. Fitted and judged leaving one workspace out, it reaches more
relevant records and keeps more tasks silent than the two floors (docs/QUALITY.md, "Issue 26:
a learned relevance for learnings and patterns"; eval/knowledge/fit_relevance.py, whose weights
file eval/knowledge/relevance_weights.json these values are, on the raw scale).

The cosines are one model's (the model the flywheel's records are ranked on,
``swarmq.federated.meaning``): a relevance is kept per model, never applied to another's scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LearnedRelevance:
    """``P(relevant) = σ(intercept + share·w_share + cosine·w_cosine + title·w_title +
    rare·w_rare)``; a record is relevant at ``floor`` or above."""

    intercept: float
    share: float
    """Weight of the share of the task's content words the record holds (0..1)."""
    cosine: float
    """Weight of the cosine of the record's meaning text (title and body opening)."""
    title: float
    """Weight of the cosine of its title alone (a record without one: its text's cosine)."""
    floor: float
    """The least probability injected: under it for every record, the store stays silent."""
    rare: float = 0.0
    """Weight of the share of the task's words it holds, each word weighted by its rarity among
    the workspace's learnings and patterns (``swarmq.flywheel.lookup.rarity``): a word every
    record holds says little of which record the task wants."""

    def probability(
        self, share: float, cosine: float, title: float | None, rare: float = 0.0
    ) -> float:
        """How likely the record is what the task wants, in 0..1 (ranks the records)."""
        z = (
            self.intercept
            + self.share * share
            + self.cosine * cosine
            + self.title * (cosine if title is None else title)
            + self.rare * rare
        )
        if z < -60.0:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def relevance(
        self, share: float, cosine: float, title: float | None, rare: float = 0.0
    ) -> float | None:
        """The probability when it reaches the floor, else ``None`` (not an answer)."""
        chance = self.probability(share, cosine, title, rare)
        return chance if chance >= self.floor else None
