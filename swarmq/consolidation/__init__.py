"""Nightly consolidation: exact near-duplicate joins, then merge, supersede and link.

The planner (:mod:`.plan`) works on any population of lessons; :mod:`.knowledge` applies its
plan to an opencode-swarm knowledge tier (swarm, link or hive) and :mod:`.learnings` to an
AgentOps learnings store. Every run is journalled in an events file (:mod:`.events`) so that a
crash leaves each store as it was before or as it is after the run, and is idempotent: a second
run over the result finds nothing to do.
"""

from typing import TYPE_CHECKING

from swarmq.memory.lazypkg import lazy_package

if TYPE_CHECKING:
    from swarmq.consolidation.config import ConsolidationConfig, EmptyLessons
    from swarmq.consolidation.plan import Action, ActionKind, Plan, Reason

__all__ = ["Action", "ActionKind", "ConsolidationConfig", "EmptyLessons", "Plan", "Reason"]

lazy_package(
    __name__,
    {
        "config": ("ConsolidationConfig", "EmptyLessons"),
        "plan": ("Action", "ActionKind", "Plan", "Reason"),
    },
)
