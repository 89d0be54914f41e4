"""``curator:`` in swarm.yaml: enrichment batches and the skill compiler's maturity settings.

The daily budget itself is ``quotas.enrichment`` (30 calls a day by default, ``window: utc`` or
``local``), shared with every other enrichment caller, separate from ``quotas.skill_improver``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from swarmq.skills.config import DEFAULT_MIN_SKILL_CONFIDENCE, DEFAULT_MIN_SKILL_CONFIRMATIONS


class CuratorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enrichment_enabled: bool = True
    enrichment_batch_size: Annotated[int, Field(ge=1, le=50)] = 8
    """Entries sent in one LLM call (one quota slot per call, not per entry)."""
    enrichment_max_batches_per_run: Annotated[int, Field(ge=1, le=1000)] = 3
    """Calls one ``curator.enrich`` run may make; the rest wait for the next run."""
    allow_deterministic_fallback: bool | None = None
    """With no provider (or one that cannot be reached): rule-based enrichment tagged
    ``deterministic_fallback`` when true, refusal with ``no_llm_client`` when false.
    ``null`` = ``llm.allow_deterministic_fallback``."""
    skill_generation_enabled: bool = True
    min_skill_confidence: Annotated[float, Field(ge=0, le=1)] = DEFAULT_MIN_SKILL_CONFIDENCE
    min_skill_confirmations: Annotated[int, Field(ge=0, le=1000)] = DEFAULT_MIN_SKILL_CONFIRMATIONS
    skill_similarity_threshold: Annotated[float, Field(gt=0, le=1)] = 0.5
    """Tag or lesson-bigram Jaccard at which discovery puts two entries in one skill."""
