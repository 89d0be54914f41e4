"""What running missions needs of the swarm's settings, as Protocols the roster satisfies, so
that the domain code asks for these settings and never imports the roster."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from swarmq.missions.config import AgentConfig, MissionsConfig
from swarmq.profiles.bootstrap import ProfileSettings, ProfileWorker


class MissionWorker(ProfileWorker, Protocol):
    """A worker's roster entry as the mission runner reads it: its profile and its agent."""

    @property
    def agent(self) -> AgentConfig | None: ...


class RunnerSettings(ProfileSettings, Protocol):
    """The roster as the mission runner reads it: what profiles need, plus the ``missions:``
    section, the workspace and each worker's agent."""

    @property
    def missions(self) -> MissionsConfig: ...
    @property
    def workers(self) -> Sequence[MissionWorker]: ...
    @property
    def workspace_dir(self) -> Path: ...

    def worker(self, worker_id: str) -> MissionWorker: ...
