"""The ``quotas:`` section of swarm.yaml: each LLM quota's daily budget and window. Owned by
the coordination layer that enforces it; the roster composes it."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swarmq.names import ENRICHMENT_QUOTA, IMPROVER_QUOTA


class QuotaWindow(StrEnum):
    """Which calendar day a quota counts in (opencode-swarm's ``window`` field)."""

    UTC = "utc"
    LOCAL = "local"


class QuotaConfig(BaseModel):
    """A daily budget of LLM calls shared by the whole cluster."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    max_calls_per_day: Annotated[int, Field(ge=0, le=1_000_000)]
    window: QuotaWindow = QuotaWindow.UTC
    timezone: str | None = None
    """IANA zone for ``window: local``; the host's zone when omitted."""
    lease_seconds: Annotated[float, Field(gt=0, le=86_400)] = 600.0
    """How long a reserved-but-unstarted slot is held before it returns to the pool."""
    max_clock_skew_seconds: Annotated[float, Field(gt=0, le=7 * 86_400)] = 86_400.0
    """How far this host's clock may be from the Redis server's before the gate refuses to
    reserve (Redis ``TIME`` decides the window either way; a host further off is broken)."""

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown IANA time zone {value!r} (e.g. 'Europe/Berlin')") from exc
        return value

    @model_validator(mode="after")
    def _zone_needs_local(self) -> QuotaConfig:
        if self.timezone is not None and self.window is QuotaWindow.UTC:
            raise ValueError("timezone is only meaningful with window: local")
        return self


def default_quotas() -> dict[str, QuotaConfig]:
    """opencode-swarm's two budgets, with swarmq's defaults."""
    return {
        ENRICHMENT_QUOTA: QuotaConfig(max_calls_per_day=30),
        IMPROVER_QUOTA: QuotaConfig(max_calls_per_day=10),
    }
