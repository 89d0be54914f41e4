"""Builds forge and flywheel collaborators from a roster: the ``.agents`` layout, the optional
LLM completer behind the ``forge`` quota, the knowledge-store sink for promotions, and the two
ways an agent's own actions confirm knowledge (acknowledgements fed back to the lessons they
name, failures observed per session).

Shared by the Celery tasks, the mission runner, hooks and the CLI; imports no Celery.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from swarmq.coord.cluster import Cluster
from swarmq.flywheel.bridge import LessonSink
from swarmq.flywheel.confirm import FailureObservation, record_acknowledgements, record_failure
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.acks import AckResult, acknowledge
from swarmq.knowledge.project import KnowledgeStore
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


def acknowledge_with_feedback(
    roster: Roster,
    locks: StoreLocks,
    text: str,
    *,
    knowledge: KnowledgeStore | None = None,
    source: str = "architect_marker",
    agent: str | None = None,
) -> list[AckResult]:
    """Commit the acknowledgement markers in ``text`` (``swarmq.knowledge.acks``), then feed
    each new ``applied``/``contradicted`` one of a lesson the flywheel produced back to its
    learning or pool candidate as a citation, so its utility, σ and ρ move at the next close
    loop and a provisional lesson is confirmed (or retired)."""
    knowledge = knowledge or knowledge_store(roster, locks)
    results = acknowledge(knowledge, text, source=source, agent=agent)
    record_acknowledgements(layout_for(roster), locks, results, when=knowledge.swarm.clock())
    return results


def observe_failure(
    roster: Roster,
    locks: StoreLocks,
    text: str,
    *,
    session_id: str,
    when: datetime | None = None,
) -> FailureObservation | None:
    """Note a failing call (command and error in ``text``) of ``session_id`` at ``when`` (the
    session's clock): the next close loop confirms the lessons of that failure learned in
    other sessions. ``None`` when the text holds no recognisable failure."""
    return record_failure(layout_for(roster), locks, text, session_id=session_id, when=when)


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
