"""The AgentOps knowledge flywheel: pool, promotion, learnings, citations, maturity, metrics.

Canonical state is the project's ``.agents/`` directory in AgentOps' own formats, so an
existing AgentOps project works as it is and ``ao`` can keep reading what swarmq writes.
"""
