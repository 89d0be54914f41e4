"""The ``metrics:`` section of swarm.yaml: where ``swarmq metrics`` listens, whose token guards
it, and what a model's tokens cost (the price table the LLM spend figures are estimated with)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

NonNegative = Annotated[float, Field(ge=0)]


class ModelPrice(BaseModel):
    """US dollars per million tokens, as providers publish them."""

    model_config = ConfigDict(extra="forbid")

    input_per_million: NonNegative = 0.0
    output_per_million: NonNegative = 0.0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1e6


class MetricsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    host: str = "127.0.0.1"
    """Loopback by default, like the API: expose it on purpose (with its token) or not at all."""
    port: Annotated[int, Field(ge=1, le=65535)] = 9464
    token_env: str | None = None
    """Environment variable holding the exporter's bearer token; ``null`` shares the API's
    (``api.token_env``, else the token stored in ``<runtime>/api-token``)."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """Price per model name (``gpt-4o-mini``) or ``provider/model``; a model without a price
    counts tokens and no cost."""
    daily_budget_usd: NonNegative | None = None
    """The LLM spend a day may reach before the ``SwarmqLLMCostOverBudget`` alert fires."""
    flywheel_every_seconds: Annotated[float, Field(ge=0, le=3600)] = 30.0
    """The flywheel's σ, ρ and δ walk every learning and citation; they are recomputed at most
    this often (they move over days; 0 recomputes on every scrape)."""
    store_wait_seconds: Annotated[float, Field(ge=0, le=60)] = 0.1
    """How long a scrape waits for an appended knowledge store's fold before it shows the
    previous figures (``swarmq_knowledge_store_stale`` 1) and lets the fold finish for the next
    scrape. A rewritten store (an update replaces the file) is never waited for: its re-read
    takes longer than a scrape may."""
