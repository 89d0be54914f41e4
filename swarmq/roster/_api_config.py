"""The ``api:`` section of swarm.yaml: where ``swarmq api`` listens and how callers authenticate."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ApiConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    host: str = "127.0.0.1"
    """Loopback by default: expose it on purpose (and with a token) or not at all."""
    port: Annotated[int, Field(ge=1, le=65535)] = 8765
    token_env: str | None = "SWARMQ_API_TOKEN"
    """Environment variable holding the bearer token; when it is set, every request needs it."""
    max_body_bytes: Annotated[int, Field(ge=1024, le=64 * 1024 * 1024)] = 2 * 1024 * 1024
    header_timeout_seconds: Annotated[float, Field(gt=0, le=300)] = 10.0
    """How long a connection may take to send a whole request head; then it is closed (a
    slow-header client otherwise holds its connection, and a file descriptor, for good)."""
    max_connections: Annotated[int, Field(ge=16, le=1_000_000)] = 512
    """Open connections at most (kept under the process's file limit); a new one past it
    evicts the connection that has waited longest for its request head."""
    keep_alive_seconds: Annotated[float, Field(gt=0, le=300)] = 5.0
    """How long an idle keep-alive connection stays open between requests."""
