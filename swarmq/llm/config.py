"""The ``llm:`` section of swarm.yaml: which provider the LLM jobs use and how. Owned by the
LLM layer that builds the provider; the roster composes it."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator


class LLMProvider(StrEnum):
    NONE = "none"
    OPENAI = "openai"
    COMMAND = "command"


class LLMConfig(BaseModel):
    """How curator and skill jobs reach a model; ``none`` keeps every job deterministic."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    provider: LLMProvider = LLMProvider.NONE
    base_url: str | None = None
    """OpenAI-compatible endpoint, e.g. ``https://api.openai.com/v1``."""
    model: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    """Name of the environment variable holding the key (the key itself never goes in YAML)."""
    command: list[str] | None = None
    """For ``provider: command``: argv template; the prompt goes to stdin, the reply is stdout."""
    timeout_seconds: Annotated[float, Field(gt=0, le=3600)] = 120.0
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3
    requests_per_minute: Annotated[float, Field(gt=0)] | None = None
    """Cluster-wide request rate limit (token bucket in Redis), besides the daily quotas."""
    allow_deterministic_fallback: bool = True
    context_tokens: Annotated[int, Field(ge=256)] | None = None
    """The model's context window in tokens. When set, prompts are sized to it: inputs are
    trimmed by priority, and a prompt that still cannot fit is refused before a quota slot is
    spent. ``null``: not declared, nothing is sized."""
    reply_tokens: Annotated[int, Field(ge=1)] = 2048
    """Tokens of the context kept free for the reply."""
    embedding_model: str | None = None
    """An embeddings model on the same OpenAI-compatible endpoint (``POST {base_url}/embeddings``
    with ``base_url`` and ``api_key_env`` above); when set, hybrid knowledge retrieval embeds
    through it instead of the packaged local model. ``null``: the local model."""

    @model_validator(mode="after")
    def _provider_fields(self) -> LLMConfig:
        if self.provider is LLMProvider.OPENAI and not (self.base_url and self.model):
            raise ValueError("provider 'openai' needs base_url and model")
        if self.embedding_model and not self.base_url:
            raise ValueError("embedding_model needs base_url (an OpenAI-compatible endpoint)")
        if self.provider is LLMProvider.COMMAND and not self.command:
            raise ValueError("provider 'command' needs command (an argv list)")
        return self
