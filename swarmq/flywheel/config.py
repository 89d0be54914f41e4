"""The ``flywheel:`` section of swarm.yaml (defaults are AgentOps')."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from swarmq.flywheel.model import QualityTier
from swarmq.knowledge.config import ValidationMode


@dataclass(frozen=True, slots=True)
class GateRules:
    """The promotion gates of :func:`swarmq.flywheel.promotion.promotion_gate` (AgentOps')."""

    promotion_age_hours: float = 24.0
    min_citations: int = 1
    bronze_min_citations: int = 3


class FlywheelConfig(BaseModel):
    """Promotion gates, maintenance switches and the metrics window of the close loop."""

    model_config = ConfigDict(extra="forbid")

    promotion_age_hours: Annotated[float, Field(ge=0)] = 24.0
    """A candidate must be older than this to graduate (keeps one session's noise out), unless
    a session other than its own confirmed it: that is the proof the wait stands in for."""
    min_citations: Annotated[int, Field(ge=0)] = 1
    """Confirmations any candidate needs: an acknowledgement, a recurrence of its failure, a
    helpful or applied citation. A retrieval (``lookup``, an injection) is exposure and does
    not count."""
    bronze_min_citations: Annotated[int, Field(ge=0)] = 3
    """Confirmations a bronze candidate needs (gold and silver need only ``min_citations``)."""
    provisional: bool = True
    """Publish high-confidence candidates to the knowledge store at once, marked provisional,
    so the next session can use (and so confirm) them before they graduate."""
    provisional_min_tier: QualityTier = QualityTier.SILVER
    """The tier a candidate needs to be shown provisionally, and then only a high-confidence
    one: gold, or extracted with high confidence (a stated lesson, a root cause), or carrying a
    failure signature (a failing call and its fix, recalled when that failure happens)."""
    provisional_days: Annotated[float, Field(gt=0)] = 14.0
    """A provisional lesson nobody confirmed within this many days (on the sessions' clock) is
    retired from the knowledge store; its candidate stays in the pool and can still graduate."""
    reject_discard: bool = True
    """Move discard-tier candidates to ``pool/rejected`` (kept for audit) during the close loop."""
    decay_confidence: bool = True
    """Apply the 10 %/week confidence decay to learnings without recent feedback."""
    expire: bool = True
    """Archive learnings whose ``valid_until`` has passed."""
    evict: bool = True
    """Archive learnings with utility < 0.3, confidence < 0.2, not established, uncited 90 days."""
    stale_days: Annotated[int, Field(ge=1)] = 90
    metrics_days: Annotated[int, Field(ge=1, le=365)] = 7
    """The window σ, ρ and the golden signals are measured over."""
    knowledge_bridge: bool = True
    """Also add promoted learnings to the swarm-tier knowledge store (so injection sees them)."""
    knowledge_bridge_validation: ValidationMode = ValidationMode.STRICT
    """The validation mode for bridged lessons: machine-promoted and already gated, they are
    technical (inline code is normal); ``strict`` still refuses real dangerous commands."""
    lookup_limit: Annotated[int, Field(ge=1, le=200)] = 10

    def gate_rules(self) -> GateRules:
        return GateRules(self.promotion_age_hours, self.min_citations, self.bronze_min_citations)
