"""Swarm2 worker profile memory: IDENTITY/SOUL/MEMORY, missions, episodes, handoffs, runtime.json.

The lead's process code calls :func:`ensure_profiles` from ``swarmq up`` and :func:`read_runtime`
from ``swarmq status``.
"""
