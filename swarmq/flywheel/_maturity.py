"""Maturity (CASS) of promoted learnings: transitions, confidence decay, expiry and eviction.

Transition rules, first match wins (reasons format numbers with two decimals):

1. any → anti-pattern when utility ≤ 0.2 and harmful_count ≥ 3;
2. provisional → candidate when utility ≥ 0.55 and reward_count ≥ 3;
3. candidate → established when utility ≥ 0.55, reward_count ≥ 5 and (helpful > harmful or
   reward_count ≥ 10); candidate → provisional when utility < 0.3;
4. established → candidate when utility < 0.5;
5. anti-pattern → provisional (rehabilitation) when utility ≥ 0.6 and helpful > 2 × harmful.

Confidence decays by e^(−0.1·weeks) since the last feedback or decay. A learning whose
``valid_until`` has passed is expired, and one with utility < 0.3, confidence < 0.2, not
established and not cited for 90 days is evicted: both move to ``.agents/archive/learnings/``
(never deleted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from swarmq.flywheel._learning_fields import declared_confidence, written_date
from swarmq.flywheel.artifacts import Learning, updated_text
from swarmq.flywheel.model import (
    CONFIDENCE_DECAY_RATE,
    ESTABLISHED_DEMOTION_THRESHOLD,
    ESTABLISHED_MIN_REWARDS,
    IMPLICIT_HELPFUL_REWARDS,
    MATURITY_ANTI_PATTERN_THRESHOLD,
    MATURITY_DEMOTION_THRESHOLD,
    MATURITY_PROMOTION_THRESHOLD,
    MIN_FEEDBACK_FOR_ANTI_PATTERN,
    MIN_FEEDBACK_FOR_PROMOTION,
    REHABILITATION_THRESHOLD,
    Maturity,
    parse_time,
    rfc3339,
)


@dataclass(frozen=True, slots=True)
class Transition:
    old: str
    new: str
    transitioned: bool
    reason: str


def check_transition(
    maturity: str, utility: float, helpful: int, harmful: int, rewards: int
) -> Transition:
    """The maturity rules as one pure function (the file is not touched)."""
    old = maturity or Maturity.PROVISIONAL.value
    if utility <= MATURITY_ANTI_PATTERN_THRESHOLD and harmful >= MIN_FEEDBACK_FOR_ANTI_PATTERN:
        reason = f"utility {utility:.2f} <= {MATURITY_ANTI_PATTERN_THRESHOLD:.2f} and harmful_count {harmful} >= {MIN_FEEDBACK_FOR_ANTI_PATTERN}"
        return Transition(old, Maturity.ANTI_PATTERN.value, old != Maturity.ANTI_PATTERN, reason)
    if old == Maturity.PROVISIONAL:
        if utility >= MATURITY_PROMOTION_THRESHOLD and rewards >= MIN_FEEDBACK_FOR_PROMOTION:
            return Transition(
                old,
                Maturity.CANDIDATE.value,
                True,
                f"utility {utility:.2f} >= {MATURITY_PROMOTION_THRESHOLD:.2f} and reward_count {rewards} >= {MIN_FEEDBACK_FOR_PROMOTION}",
            )
        return Transition(old, old, False, "not enough positive feedback for promotion")
    if old == Maturity.CANDIDATE:
        if (
            utility >= MATURITY_PROMOTION_THRESHOLD
            and rewards >= ESTABLISHED_MIN_REWARDS
            and (helpful > harmful or rewards >= IMPLICIT_HELPFUL_REWARDS)
        ):
            return Transition(
                old,
                Maturity.ESTABLISHED.value,
                True,
                f"utility {utility:.2f} >= {MATURITY_PROMOTION_THRESHOLD:.2f}, reward_count {rewards} >= {ESTABLISHED_MIN_REWARDS}, helpful {helpful} vs harmful {harmful}",
            )
        if utility < MATURITY_DEMOTION_THRESHOLD:
            return Transition(
                old,
                Maturity.PROVISIONAL.value,
                True,
                f"utility {utility:.2f} < {MATURITY_DEMOTION_THRESHOLD:.2f}",
            )
        return Transition(old, old, False, "candidate criteria unchanged")
    if old == Maturity.ESTABLISHED:
        if utility < ESTABLISHED_DEMOTION_THRESHOLD:
            return Transition(
                old,
                Maturity.CANDIDATE.value,
                True,
                f"utility {utility:.2f} < {ESTABLISHED_DEMOTION_THRESHOLD:.2f}",
            )
        return Transition(old, old, False, "established and still useful")
    if old == Maturity.ANTI_PATTERN:
        if utility >= REHABILITATION_THRESHOLD and helpful > 2 * harmful:
            return Transition(
                old,
                Maturity.PROVISIONAL.value,
                True,
                f"rehabilitation: utility {utility:.2f} >= {REHABILITATION_THRESHOLD:.2f} and helpful {helpful} > 2 x harmful {harmful}",
            )
        return Transition(old, old, False, "anti-pattern criteria unchanged")
    return Transition(old, old, False, f"unknown maturity {old!r}; left as is")


def transition_for(learning: Learning) -> Transition:
    return check_transition(
        learning.maturity,
        learning.utility,
        learning.count("helpful_count"),
        learning.count("harmful_count"),
        learning.count("reward_count"),
    )


def transition_text(learning: Learning, result: Transition, now: datetime) -> str:
    return updated_text(
        learning,
        {
            "maturity": result.new,
            "maturity_changed_at": rfc3339(now),
            "maturity_reason": result.reason,
        },
    )


def decayed_confidence(confidence: float, weeks: float) -> float:
    return confidence * math.exp(-CONFIDENCE_DECAY_RATE * weeks) if weeks > 0 else confidence


def decay_text(
    learning: Learning, now: datetime, *, min_interval: timedelta = timedelta(days=1)
) -> str | None:
    """The text with confidence decayed to ``now``, or ``None`` when too little time passed.

    The clock starts at the last decay, else the last feedback, else the learning's date.
    Learnings whose confidence is a word (hand-written AgentOps files) are left as they are.
    """
    declared = learning.fields.get("confidence")
    if declared is not None and (
        isinstance(declared, bool) or not isinstance(declared, int | float)
    ):
        return None  # a hand-written "confidence: high" is a word to keep, not a number to decay
    value, word = declared_confidence(learning)
    if word is not None:
        return None  # the same, written in the body ("**Confidence**: medium")
    last = learning.time("last_decay_at", "last_reward_at", "maturity_changed_at") or written_date(
        learning
    )
    if last is None or now - last < min_interval:
        return None
    weeks = (now - last).total_seconds() / (7 * 86400)
    confidence = decayed_confidence(value, weeks)
    return updated_text(
        learning,
        {
            "confidence": round(confidence, 4),
            "last_decay_at": rfc3339(now),
            "decay_count": learning.count("decay_count") + 1,
        },
    )


def is_expired(learning: Learning, now: datetime) -> bool:
    if str(learning.fields.get("expiry_status") or "") == "archived":
        return False
    until = parse_time(learning.fields.get("valid_until"))
    return until is not None and now > until


def is_evictable(
    learning: Learning, last_cited: datetime | None, now: datetime, *, stale_days: int = 90
) -> bool:
    if learning.maturity == Maturity.ESTABLISHED:
        return False
    if learning.utility >= 0.3 or declared_confidence(learning)[0] >= 0.2:
        return False
    return last_cited is None or last_cited <= now - timedelta(days=stale_days)


def utc(moment: datetime | None) -> datetime:
    return (moment or datetime.now(UTC)).astimezone(UTC)
