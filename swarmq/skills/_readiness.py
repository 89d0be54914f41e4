"""The readiness gate: which knowledge is proven enough to be compiled into a skill.

opencode-swarm's decision, in order:

1. a net-negative outcome signal rejects, whatever else is true;
2. a strong outcome record (≥ 3 explicit applications or ≥ 3 successes after being shown) with a
   strictly positive signal accepts outright;
3. otherwise confidence ≥ ``min_skill_confidence`` AND distinct confirming phases ≥
   ``min_skill_confirmations`` (both; neither alone suffices), except that ``high``/``critical``
   directives take a fast track: 1 phase and confidence ≥ 0.60.

After clustering, a cluster of one passes only if that entry is a high/critical directive or has
a strong outcome record (singleton eligibility).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from swarmq.skills.config import DEFAULT_MIN_SKILL_CONFIDENCE, DEFAULT_MIN_SKILL_CONFIRMATIONS

OUTCOME_SIGNAL_SMOOTHING = 4
STRONG_OUTCOME_COUNT = 3
HIGH_PRIORITY_MIN_CONFIDENCE = 0.60


class ReadinessEntry(Protocol):
    """What the gate reads from a knowledge entry (``knowledge.model.Entry`` satisfies it)."""

    @property
    def confidence(self) -> float: ...

    @property
    def outcomes(self) -> dict[str, Any]: ...

    @property
    def priority(self) -> str: ...

    def phase_numbers(self) -> set[int]: ...


def _n(outcomes: Mapping[str, Any], key: str) -> float:
    value = outcomes.get(key, 0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def outcome_signal(outcomes: Mapping[str, Any] | None) -> float:
    """Track record in (-1, 1): (positives − negatives) / (total + 4); 0 without evidence.

    Reads only the v2/v3 counters (never the frozen v1 ``applied_count``)."""
    if not outcomes:
        return 0.0
    positives = _n(outcomes, "applied_explicit_count") + _n(outcomes, "succeeded_after_shown_count")
    negatives = sum(
        _n(outcomes, k)
        for k in (
            "ignored_count",
            "violated_count",
            "contradicted_count",
            "failed_after_shown_count",
        )
    )
    total = positives + negatives
    return 0.0 if total == 0 else (positives - negatives) / (total + OUTCOME_SIGNAL_SMOOTHING)


def strong_outcome(outcomes: Mapping[str, Any] | None) -> bool:
    outcomes = outcomes or {}
    return (
        _n(outcomes, "applied_explicit_count") >= STRONG_OUTCOME_COUNT
        or _n(outcomes, "succeeded_after_shown_count") >= STRONG_OUTCOME_COUNT
    )


def high_priority(entry: ReadinessEntry) -> bool:
    return entry.priority in ("high", "critical")


@dataclass(frozen=True, slots=True)
class ReadinessVerdict:
    passed: bool
    reason: str


def readiness_gate(
    entry: ReadinessEntry,
    *,
    min_confidence: float = DEFAULT_MIN_SKILL_CONFIDENCE,
    min_confirmations: int = DEFAULT_MIN_SKILL_CONFIRMATIONS,
) -> ReadinessVerdict:
    outcomes = entry.outcomes
    signal = outcome_signal(outcomes)
    if signal < 0:
        return ReadinessVerdict(False, f"negative outcome signal {signal:.2f}")
    strong = strong_outcome(outcomes)
    if strong and signal > 0:
        return ReadinessVerdict(True, "strong outcome record")
    phases = len(entry.phase_numbers())
    fast_track = (
        high_priority(entry) and phases >= 1 and entry.confidence >= HIGH_PRIORITY_MIN_CONFIDENCE
    )
    if fast_track:
        return ReadinessVerdict(True, f"{entry.priority} directive fast track ({phases} phase(s))")
    if entry.confidence < min_confidence and not strong:
        return ReadinessVerdict(False, f"confidence {entry.confidence:.2f} < {min_confidence:.2f}")
    if phases < min_confirmations and not strong:
        return ReadinessVerdict(False, f"{phases} distinct phase(s) < {min_confirmations}")
    return ReadinessVerdict(True, f"confidence {entry.confidence:.2f}, {phases} phase(s)")


def singleton_eligible(entry: ReadinessEntry) -> bool:
    """May a cluster of this one entry become a skill?"""
    return high_priority(entry) or strong_outcome(entry.outcomes)
