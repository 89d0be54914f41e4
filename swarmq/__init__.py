"""swarmq: the distributed worker system that keeps an AI agent swarm's knowledge alive.

The few things a Python user needs, importable from the package (loaded on first use, so
``import swarmq`` stays cheap and starts nothing)::

    from swarmq import MissionClient, KnowledgeStore, load_roster, SwarmqError

    roster = load_roster("swarm.yaml")
    mission = MissionClient(roster).submit("Fix the flaky test", role="coder")
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (2 ms of a fresh process)

__version__ = "0.1.0"

_EXPORTS = {
    "MissionClient": "swarmq.client",
    "KnowledgeStore": "swarmq.knowledge.project",
    "Roster": "swarmq.roster.schema",
    "RosterError": "swarmq.roster.loader",
    "load_roster": "swarmq.roster.loader",
    "SwarmqError": "swarmq.errors",
}

__all__ = [
    "KnowledgeStore",
    "MissionClient",
    "Roster",
    "RosterError",
    "SwarmqError",
    "__version__",
    "load_roster",
]

if TYPE_CHECKING:
    from typing import Any

    from swarmq.client import MissionClient
    from swarmq.errors import SwarmqError
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.roster.loader import RosterError, load_roster
    from swarmq.roster.schema import Roster


def __getattr__(name: str) -> Any:
    """Import an exported name's module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'swarmq' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
