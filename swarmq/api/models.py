"""Request bodies of the HTTP API (camelCase on the wire, as Swarm2's server speaks)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from swarmq.profiles.access import MemoryKind
from swarmq.storage.paths import ID_PATTERN

ID_SCHEMA = {"pattern": ID_PATTERN.pattern}
"""The id rule, documented in the schema; enforced by ``check_id`` (a clear 400, not a 422)."""

Id = Annotated[str, Field(min_length=1, max_length=256, json_schema_extra=ID_SCHEMA)]
"""Shape only; ids are checked by ``check_id`` so a hostile one gets a clear 400."""


class ErrorBody(BaseModel):
    """Every refusal: ``{"ok": false, "error": "<what and where>"}``."""

    ok: bool = False
    error: str


_ANSWERS = {
    400: "bad input: an id outside ^[A-Za-z0-9_-]{1,64}$, a path outside its root, an unknown kind",
    401: "missing or wrong bearer token",
    404: "unknown worker, mission or memory file",
    409: "conflict: the mission's state does not allow it, or an idempotency key reused",
    413: "request body over api.max_body_bytes",
    503: "unavailable: a store lock, Redis or the disk (no space left)",
}


def answers(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The documented error answers of a route (FastAPI's ``responses=``)."""
    return {code: {"model": ErrorBody, "description": _ANSWERS[code]} for code in codes}


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class MemoryWriteBody(_Body):
    """``POST /api/swarm-memory`` (Swarm2's body plus ``file`` and ``mirror``)."""

    worker_id: Id | None = Field(default=None, alias="workerId")
    kind: MemoryKind
    mission_id: Id | None = Field(default=None, alias="missionId")
    event_type: Annotated[str, Field(max_length=64)] | None = Field(default=None, alias="eventType")
    content: Annotated[str, Field(max_length=1_000_000)] = ""
    event: dict[str, Any] = Field(default_factory=dict)
    file: Annotated[str, Field(max_length=256)] | None = None
    """profile: MEMORY.md (default), IDENTITY.md or SOUL.md; shared: ``<name>.md`` under swarm/."""
    mirror: bool = True
    """handoff: also write ``<shared>/handoffs/swarm/<workerId>-latest.md``."""


class MissionSubmitBody(_Body):
    objective: Annotated[str, Field(min_length=1, max_length=100_000)]
    title: Annotated[str, Field(max_length=200)] | None = None
    worker_id: Id | None = Field(default=None, alias="workerId")
    role: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    specialty: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    client_key: Annotated[str, Field(min_length=1, max_length=256)] | None = Field(
        default=None, alias="clientKey"
    )
    """Idempotency key (the ``Idempotency-Key`` header works too)."""
    mission_id: Id | None = Field(default=None, alias="missionId")


class MissionCancelBody(_Body):
    reason: Annotated[str, Field(max_length=2_000)] = "cancelled by the orchestrator"


class MissionResumeBody(_Body):
    worker_id: Id | None = Field(default=None, alias="workerId")
    note: Annotated[str, Field(max_length=2_000)] | None = None
