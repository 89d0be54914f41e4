"""The flywheel's vocabulary and numbers, written down once (AgentOps' ``types`` and
``taxonomy`` packages): knowledge types and base scores, quality tiers, rubric weights, pool
statuses, maturity levels and their thresholds, MemRL utility constants, times as Go writes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum


class KnowledgeType(StrEnum):
    """AgentOps' knowledge types; ``decision`` is promoted to patterns, the rest to learnings."""

    DECISION = "decision"
    SOLUTION = "solution"
    LEARNING = "learning"
    FAILURE = "failure"
    REFERENCE = "reference"


BASE_SCORES: dict[str, float] = {
    KnowledgeType.DECISION: 0.8,
    KnowledgeType.SOLUTION: 0.9,
    KnowledgeType.LEARNING: 0.7,
    KnowledgeType.FAILURE: 0.75,
    KnowledgeType.REFERENCE: 0.5,
}
UNKNOWN_TYPE_BASE_SCORE = 0.5


def base_score(knowledge_type: str) -> float:
    return BASE_SCORES.get(knowledge_type, UNKNOWN_TYPE_BASE_SCORE)


class QualityTier(StrEnum):
    """A candidate's quality band in the flywheel pool (not the knowledge tiers swarm/hive)."""

    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"
    DISCARD = "discard"


@dataclass(frozen=True, slots=True)
class TierConfig:
    """One quality tier: the half-open score interval ``[min_score, max_score)`` and its gate."""

    tier: QualityTier
    min_score: float
    max_score: float
    confidence: float
    """The confidence stored on a candidate of this tier."""
    human_gate: bool
    gate_sample_rate: float


TIERS: tuple[TierConfig, ...] = (
    TierConfig(QualityTier.GOLD, 0.85, 1.01, 0.95, False, 0.0),
    TierConfig(QualityTier.SILVER, 0.70, 0.85, 0.80, False, 0.0),
    TierConfig(QualityTier.BRONZE, 0.50, 0.70, 0.60, True, 0.05),
    TierConfig(QualityTier.DISCARD, 0.0, 0.50, 0.0, False, 0.0),
)
"""Checked in this order; the first interval containing the score wins, else discard."""

TIER_RANK = {
    QualityTier.DISCARD: 0,
    QualityTier.BRONZE: 1,
    QualityTier.SILVER: 2,
    QualityTier.GOLD: 3,
}


def tier_rank(tier: str) -> int:
    """0 for discard and for names no tier has."""
    return TIER_RANK.get(QualityTier(tier), 0) if tier in QualityTier._value2member_map_ else 0


def assign_tier(score: float) -> QualityTier:
    for config in TIERS:
        if config.min_score <= score < config.max_score:
            return config.tier
    return QualityTier.DISCARD


def tier_config(tier: str) -> TierConfig:
    for config in TIERS:
        if config.tier == tier:
            return config
    return TIERS[-1]


RUBRIC_WEIGHTS: dict[str, float] = {
    "specificity": 0.30,
    "actionability": 0.25,
    "novelty": 0.20,
    "context": 0.15,
    "confidence": 0.10,
}
"""Must sum to 1.0 ± 0.01."""


class PoolStatus(StrEnum):
    PENDING = "pending"
    STAGED = "staged"
    ARCHIVED = "archived"
    REJECTED = "rejected"


POOL_DIRS: dict[PoolStatus, str] = {
    PoolStatus.PENDING: "pending",
    PoolStatus.STAGED: "staged",
    PoolStatus.ARCHIVED: "validated",  # AgentOps' legacy name, listed as archived
    PoolStatus.REJECTED: "rejected",
}
STATUS_PRECEDENCE = (
    PoolStatus.REJECTED,
    PoolStatus.ARCHIVED,
    PoolStatus.STAGED,
    PoolStatus.PENDING,
)
"""If a crash left one id in two directories, the more advanced status is the truth."""

CANDIDATE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
MAX_REASON_LENGTH = 1000


class Maturity(StrEnum):
    """CASS maturity of a promoted learning."""

    PROVISIONAL = "provisional"
    CANDIDATE = "candidate"
    ESTABLISHED = "established"
    ANTI_PATTERN = "anti-pattern"


MATURITY_TRANSITIONS: dict[Maturity, frozenset[Maturity]] = {
    Maturity.PROVISIONAL: frozenset({Maturity.CANDIDATE, Maturity.ANTI_PATTERN}),
    Maturity.CANDIDATE: frozenset(
        {Maturity.ESTABLISHED, Maturity.PROVISIONAL, Maturity.ANTI_PATTERN}
    ),
    Maturity.ESTABLISHED: frozenset({Maturity.CANDIDATE, Maturity.ANTI_PATTERN}),
    Maturity.ANTI_PATTERN: frozenset({Maturity.PROVISIONAL}),
}
"""Every move the maturity rules can make (rehabilitation returns an anti-pattern to provisional)."""

MATURITY_PROMOTION_THRESHOLD = 0.55
MATURITY_DEMOTION_THRESHOLD = 0.3
MATURITY_ANTI_PATTERN_THRESHOLD = 0.2
MIN_FEEDBACK_FOR_PROMOTION = 3
MIN_FEEDBACK_FOR_ANTI_PATTERN = 3
ESTABLISHED_MIN_REWARDS = 5
IMPLICIT_HELPFUL_REWARDS = 10
ESTABLISHED_DEMOTION_THRESHOLD = 0.5
REHABILITATION_THRESHOLD = 0.6
CONFIDENCE_DECAY_RATE = 0.1
"""Per week without feedback: confidence ← confidence · e^(−0.1·weeks)."""

ALPHA = 0.1
"""MemRL EMA learning rate: u' = (1 − α)·u + α·r."""
INITIAL_UTILITY = 0.5
LAMBDA = 0.5
"""Utility versus relevance balance when ranking lookups."""


def update_utility(utility: float, reward: float, alpha: float = ALPHA) -> float:
    return (1.0 - alpha) * utility + alpha * reward


ZERO_TIME = "0001-01-01T00:00:00Z"
"""Go's zero ``time.Time``, which ``omitempty`` does not omit."""


def rfc3339(moment: datetime | None = None) -> str:
    """A time as Go's ``time.Time`` JSON form writes it in UTC (microsecond precision)."""
    moment = (moment or datetime.now(UTC)).astimezone(UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


_FRACTION = re.compile(r"(\.\d{6})\d+")


def parse_time(value: object) -> datetime | None:
    """Parse RFC 3339 (Go's nanoseconds, ``Z`` or offsets) or a bare ``YYYY-MM-DD``; ``None``
    for anything else, including Go's zero time."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str) or not value or value.startswith("0001-01-01"):
        return None
    try:
        parsed = datetime.fromisoformat(value)  # 3.11 reads Z, offsets and nanoseconds
    except ValueError:
        text = _FRACTION.sub(r"\1", value.strip()).replace("Z", "+00:00").replace("z", "+00:00")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
