"""What the coordination layer needs of the swarm's settings, as Protocols the roster
satisfies, so that coord/ asks for these settings and never imports the roster."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol

from swarmq.coord.quota_config import QuotaConfig

LockMode = Literal["cluster", "single-host"]


class IdentitySettings(Protocol):
    """The lock discipline and the canonical roots it is recorded in."""

    @property
    def locks(self) -> LockMode: ...
    @property
    def workspace_dir(self) -> Path: ...
    @property
    def profiles_dir(self) -> Path: ...
    @property
    def shared_dir(self) -> Path: ...
    @property
    def hive_dir(self) -> Path: ...
    @property
    def runtime_dir(self) -> Path: ...


class ClusterSettings(IdentitySettings, Protocol):
    """What a connection to the swarm's Redis needs: its URL, the swarm's name (the key
    namespace), the quotas the gate enforces and where their files are mirrored."""

    @property
    def redis_url(self) -> str: ...
    @property
    def swarm(self) -> str: ...
    @property
    def quotas(self) -> Mapping[str, QuotaConfig]: ...
    @property
    def swarm_dir(self) -> Path: ...
