"""The storage kernel: how swarmq writes a canonical file so that nothing is lost or torn.

Owns atomic whole-file writes and fsynced JSONL appends (with corrupt-line sidecars), the store
lock protocol and its local implementation, workspace paths and identity, the clock, the change
journal that derived indexes read, and the process-liveness check. It imports nothing of swarmq
but :mod:`swarmq.errors`: every domain package builds on it.
"""
