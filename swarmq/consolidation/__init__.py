"""Nightly consolidation: exact near-duplicate joins, then merge, supersede and link.

The planner (:mod:`._plan`) works on any population of lessons; :mod:`.knowledge` applies its
plan to an opencode-swarm knowledge tier (swarm, link or hive) and :mod:`._learnings` to an
AgentOps learnings store. Every run is journalled in an events file (:mod:`._events`) so that a
crash leaves each store as it was before or as it is after the run, and is idempotent: a second
run over the result finds nothing to do.
"""
