"""``skill_improver:`` in swarm.yaml (opencode-swarm's keys and defaults).

``max_calls_per_day`` and ``quota_window`` are not here: the budget is ``quotas.skill_improver``
(10 a day by default), counted cluster-wide by the quota gate.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MIN_SKILL_CONFIDENCE = 0.70
DEFAULT_MIN_SKILL_CONFIRMATIONS = 2
"""The skill compiler's readiness gate: a cluster's confidence and confirmations."""

Target = Literal["skills", "spec", "architect_prompt", "knowledge"]


def all_targets() -> list[Target]:
    return ["skills", "spec", "architect_prompt", "knowledge"]


class SkillImproverConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = False
    """Off by default, as in opencode-swarm: each run is a call to an expensive model."""
    trigger: Literal["manual", "scheduled"] = "manual"
    """``scheduled`` lets beat run ``skills.improve``, cadence-gated by the interval below."""
    consolidation_interval_hours: Annotated[float, Field(gt=0, le=24 * 365)] = 24.0
    consolidation_max_calls_per_run: Annotated[int, Field(ge=1, le=100)] = 1
    """A scheduled run makes at most this many calls (retries included)."""
    targets: list[Target] = Field(default_factory=all_targets)
    write_mode: Literal["proposal", "draft_skills"] = "proposal"
    """``draft_skills`` also writes draft SKILL.md files (never activated automatically)."""
    require_user_approval: bool = True
    """A manual run must be approved by a person (the CLI counts as one); scheduled runs were
    approved by setting ``trigger: scheduled``."""
    allow_deterministic_fallback: bool | None = None
    """``null`` = ``llm.allow_deterministic_fallback``."""
    max_proposal_chars: Annotated[int, Field(ge=500, le=200_000)] = 20_000
