"""The AgentOps knowledge flywheel: pool, promotion, learnings, citations, maturity, metrics.

Canonical state is the project's ``.agents/`` directory in AgentOps' own formats, so an
existing AgentOps project works as it is and ``ao`` can keep reading what swarmq writes.
"""

from swarmq.memory.flywheel.closeloop import CloseLoopResult, close_loop
from swarmq.memory.flywheel.config import FlywheelConfig
from swarmq.memory.flywheel.lookup import LookupHit, lookup, search
from swarmq.memory.flywheel.metrics import compute_metrics, read_baselines
from swarmq.memory.flywheel.model import KnowledgeType, Maturity, PoolStatus, QualityTier
from swarmq.memory.flywheel.pool import Pool, PoolEntry, PoolError
from swarmq.memory.flywheel.store import AgentsLayout

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
