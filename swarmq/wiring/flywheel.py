"""Builds forge and flywheel collaborators from a roster: the ``.agents`` layout, the optional
LLM completer behind the ``forge`` quota, and the knowledge-store sink for promotions.

Shared by the Celery tasks and the CLI; imports no Celery.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmq.coord.cluster import Cluster
from swarmq.flywheel.bridge import LessonSink
from swarmq.flywheel.store import AgentsLayout
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.storage.paths import UnsafePathError, resolve_inside
from swarmq.wiring.knowledge import knowledge_store
from swarmq.wiring.llm import CompleterChoice, completer_for


def layout_for(roster: Roster) -> AgentsLayout:
    return AgentsLayout(roster.agents_dir)


def forge_completer(
    roster: Roster, cluster: Cluster | None, *, task_id: str | None
) -> CompleterChoice:
    """The metered LLM for forge, or why there is none (disabled, no provider, no quota)."""
    cfg = roster.forge.llm
    if not cfg.enabled:
        return CompleterChoice(None, "disabled (forge.llm.enabled is false)")
    if cfg.quota not in roster.quotas:
        return CompleterChoice(
            None, f"quota {cfg.quota!r} is not declared under quotas: in swarm.yaml"
        )
    return completer_for(roster, cluster, cfg.quota, task_id=task_id)


def knowledge_sink(roster: Roster, locks: StoreLocks) -> LessonSink | None:
    """The swarm-tier knowledge store promotions are published to: ``None`` when the bridge is
    off or the project has no knowledge store (no ``.swarm/`` directory) — an AgentOps-only
    project does not grow one behind its back."""
    if not roster.flywheel.knowledge_bridge or not roster.swarm_dir.is_dir():
        return None
    return knowledge_store(roster, locks)


def transcript_path(roster: Roster, path: str) -> Path:
    """An existing transcript file, inside ``forge.transcript_roots`` when those are set."""
    candidate = Path(os.path.expanduser(path))
    if not candidate.is_absolute():
        candidate = roster.workspace_dir / candidate
    roots = [
        Path(os.path.expanduser(os.path.expandvars(str(r)))) for r in roster.forge.transcript_roots
    ]
    if roots:
        for root in roots:
            root = root if root.is_absolute() else roster.workspace_dir / root
            try:
                return _file(
                    resolve_inside(root, str(candidate.resolve().relative_to(root.resolve())))
                )
            except (ValueError, UnsafePathError):
                continue
        raise UnsafePathError(
            f"{path}: not inside forge.transcript_roots ({', '.join(map(str, roots))})"
        )
    return _file(candidate.resolve())


def _file(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such transcript file")
    return path
