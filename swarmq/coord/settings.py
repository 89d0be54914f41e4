"""The coordination layer's settings as one value the roster builds
(:meth:`swarmq.roster.schema.Roster.cluster_config`), so that coord/ never imports the roster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from swarmq.coord.quota_config import QuotaConfig

LockMode = Literal["cluster", "single-host"]


@dataclass(frozen=True)
class ClusterConfig:
    """What a connection to the swarm's Redis needs, and the lock discipline its writers hold."""

    redis_url: str
    swarm: str
    """The swarm's name: the namespace of its Redis keys."""
    quotas: Mapping[str, QuotaConfig]
    """The daily budgets the quota gate enforces."""
    quota_dir: Path
    """Where the quota files are mirrored (the project's ``.swarm/``)."""
    locks: LockMode
    """The store lock discipline, recorded in each canonical root's workspace id file."""
    workspace_dir: Path
    roots: tuple[Path, ...]
    """The configured roots besides the workspace whose files are locked (profiles, shared,
    hive, runtime)."""
    runtime_dir: Path
    """Where same-host file locks live (``locks: single-host``)."""
