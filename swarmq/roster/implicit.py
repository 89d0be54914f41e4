"""A roster for an existing opencode-swarm or AgentOps project that has no ``swarm.yaml``.

File-level commands (knowledge, forge, pool, lookup, flywheel, consolidate --dry-run, memory
search) only read and write the project's files, so they need no roster: the nearest directory
holding ``.swarm/`` or ``.agents/`` (the current one or a parent) is the workspace, every setting
is the default, and process bookkeeping goes to a per-project cache directory so the project
gets no ``.runtime/`` it did not ask for.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from swarmq.roster.loader import resolve_paths
from swarmq.roster.schema import Roster

STORES = (".swarm", ".agents")


def find_project(start: Path) -> Path | None:
    """The nearest directory (``start`` or a parent) holding ``.swarm/`` or ``.agents/``."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if any((directory / store).is_dir() for store in STORES):
            return directory
    return None


def implicit_roster(project: Path, env: Mapping[str, str] | None = None) -> Roster:
    env = os.environ if env is None else env
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", project.name).strip("-")[:48] or "project"
    tag = hashlib.sha256(str(project).encode()).hexdigest()[:8]
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    roster = Roster.model_validate(
        {
            "swarm": f"{name}-{tag}",
            "workspace": str(project),
            "paths": {"runtime": str(cache / "swarmq" / f"{name}-{tag}")},
            # No roster means no cluster: same-host locks, recorded beside the store like any
            # single-host workspace, so a swarm that later uses it in cluster mode is refused.
            "locks": "single-host",
            "workers": [{"id": "local", "role": "local"}],
        }
    )
    resolve_paths(roster, project, env)
    return roster
