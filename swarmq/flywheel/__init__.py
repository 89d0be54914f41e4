"""The AgentOps knowledge flywheel: pool, promotion, learnings, citations, maturity, metrics.

Canonical state is the project's ``.agents/`` directory in AgentOps' own formats, so an
existing AgentOps project works as it is and ``ao`` can keep reading what swarmq writes.
"""

from typing import TYPE_CHECKING

from swarmq.memory.lazypkg import lazy_package

if TYPE_CHECKING:
    from swarmq.flywheel.closeloop import CloseLoopResult, close_loop
    from swarmq.flywheel.config import FlywheelConfig
    from swarmq.flywheel.lookup import LookupHit, lookup, search
    from swarmq.flywheel.metrics import compute_metrics, read_baselines
    from swarmq.flywheel.model import KnowledgeType, Maturity, PoolStatus, QualityTier
    from swarmq.flywheel.pool import Pool, PoolEntry, PoolError
    from swarmq.flywheel.store import AgentsLayout

__all__ = [
    "AgentsLayout",
    "CloseLoopResult",
    "FlywheelConfig",
    "KnowledgeType",
    "LookupHit",
    "Maturity",
    "Pool",
    "PoolEntry",
    "PoolError",
    "PoolStatus",
    "QualityTier",
    "close_loop",
    "compute_metrics",
    "lookup",
    "read_baselines",
    "search",
]

lazy_package(
    __name__,
    {
        "closeloop": ("CloseLoopResult", "close_loop"),
        "config": ("FlywheelConfig",),
        "lookup": ("LookupHit", "lookup", "search"),
        "metrics": ("compute_metrics", "read_baselines"),
        "model": ("KnowledgeType", "Maturity", "PoolStatus", "QualityTier"),
        "pool": ("Pool", "PoolEntry", "PoolError"),
        "store": ("AgentsLayout",),
    },
)
