"""A worker's identity as its roster entry in swarm.yaml gives it: what its profile files say.

The full entry (queues, pool, agent) is :class:`swarmq.missions.config.WorkerConfig`, which
extends this model; profile code reads only these fields.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from swarmq.storage.paths import ID_PATTERN


def _safe_name(value: str) -> str:
    if ID_PATTERN.fullmatch(value) is None:
        raise ValueError(
            "must be 1-64 ASCII letters, digits, '_' or '-' (it names directories, tmux "
            "sessions and queues, so path tricks like '..' or '/' are refused)"
        )
    return value


SafeName = Annotated[str, AfterValidator(_safe_name)]
WorkerId = SafeName


class WorkerProfile(BaseModel):
    """Who a worker is: its id (its profile directory), display name, role, specialty, model."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    id: WorkerId
    name: str | None = None
    """Display name (defaults to the id)."""
    role: Annotated[str, Field(min_length=1, max_length=64)]
    specialty: str | None = None
    model: str | None = None

    @property
    def display_name(self) -> str:
        return self.name or self.id
