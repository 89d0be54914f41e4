"""Per-entry scores: the static part (known without a query) and the signals it is built from.

The outcome signal and utility are swarmq's reading of opencode-swarm's counters: applied and
succeeded-after-shown count for an entry, ignored / violated / contradicted / failed-after-shown
count against it.
"""

from __future__ import annotations

import math

from swarmq.knowledge.model import Entry, Status

WEIGHTS = {
    "text": 1.0,
    "trigger": 0.5,
    "tool": 0.6,
    "agent": 0.4,
    "weak_tool": 0.2,
    "weak_agent": 0.1,
    "confidence": 0.3,
    "generated_skill": 0.15,
    "outcome": 0.2,
    "cold_start": 0.05,
}
"""How much each component adds to an entry's final score."""
STATUS_BONUS = {Status.ESTABLISHED.value: 0.05, Status.PROMOTED.value: 0.1}
PRIORITY_BONUS = {"critical": 0.2, "high": 0.1, "medium": 0.0, "low": -0.05}


def outcome_signal(entry: Entry) -> float:
    """In [-1, 1]: positive when explicit applications and successes outweigh the negatives."""
    return _signal(entry.outcomes)


def _signal(o: dict[str, object]) -> float:
    """:func:`outcome_signal` of normalised outcomes ``o``."""
    good = _n(o.get("applied_explicit_count")) + _n(o.get("succeeded_after_shown_count"))
    bad = sum(
        _n(o.get(k))
        for k in (
            "ignored_count",
            "violated_count",
            "contradicted_count",
            "failed_after_shown_count",
        )
    )
    total = good + bad
    return 0.0 if total == 0 else (good - bad) / total


def utility_score(entry: Entry, min_retrievals: int) -> float | None:
    """An explicit ``utility_score`` field, else (applied + succeeded) / shown once an entry
    was shown ``min_retrievals`` times; ``None`` before that."""
    explicit = entry.get("utility_score")
    if isinstance(explicit, int | float) and not isinstance(explicit, bool):
        return float(explicit)
    shown = entry.counter("shown_count")
    if shown < max(1, min_retrievals):
        return None
    useful = entry.counter("applied_explicit_count") + entry.counter("succeeded_after_shown_count")
    return min(1.0, useful / shown)


def static_breakdown(entry: Entry) -> dict[str, float]:
    """The query-independent components of an entry's score (the outcomes normalised once:
    every ranked entry of every search pays this)."""
    outcomes = entry.outcomes
    shown = _n(outcomes.get("shown_count", 0))
    unshown = math.isnan(shown) or int(shown) == 0  # as entry.counter("shown_count") == 0
    return {
        "confidence": WEIGHTS["confidence"] * entry.confidence,
        "status": STATUS_BONUS.get(entry.status, 0.0),
        "priority": PRIORITY_BONUS.get(entry.priority, 0.0),
        "generated_skill": WEIGHTS["generated_skill"] if entry.generated_skill_path else 0.0,
        "outcome": WEIGHTS["outcome"] * _signal(outcomes),
        "cold_start": WEIGHTS["cold_start"] if unshown else 0.0,
    }


def _n(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
