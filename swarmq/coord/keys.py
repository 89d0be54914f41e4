"""Every Redis key swarmq uses, defined once.

All keys live under ``swarmq:<swarm>:`` so several swarms (and the test suite) can share one
Redis. Keys that one Lua script touches together carry the same ``{hash tag}`` so the scripts
also work on Redis Cluster.
"""

from __future__ import annotations

import hashlib

ROOT = "swarmq"


def prefix(swarm: str) -> str:
    """Namespace of one swarm; also the kombu ``global_keyprefix`` of its broker keys."""
    return f"{ROOT}:{swarm}:"


def _tag(resource: str) -> str:
    return hashlib.sha1(resource.encode("utf-8")).hexdigest()[:20]


def quota_prefix(swarm: str, name: str) -> str:
    """Prefix of one quota's window keys; ``quota_reserve.lua`` appends ``<day>:used|held``."""
    return f"{prefix(swarm)}quota:{{{name}}}:"


def quota_used(swarm: str, name: str, window: str) -> str:
    """Calls started in one quota window (an integer)."""
    return f"{quota_prefix(swarm, name)}{window}:used"


def quota_held(swarm: str, name: str, window: str) -> str:
    """Reserved, not yet started slots: a sorted set of token → lease expiry (ms)."""
    return f"{quota_prefix(swarm, name)}{window}:held"


def quota_started(swarm: str, name: str, window: str, token: str) -> str:
    """Receipt of one start (the window's count it returned, a short PX): the start asked again
    after its answer was lost gets that answer instead of "no longer held"."""
    return f"{quota_prefix(swarm, name)}{window}:started:{token}"


def lock(swarm: str, resource: str) -> str:
    """Owner token of a store lock, with a PX lease."""
    return f"{prefix(swarm)}lock:{{{_tag(resource)}}}"


def fence(swarm: str, resource: str) -> str:
    """Monotonic fencing counter of a store lock."""
    return f"{prefix(swarm)}fence:{{{_tag(resource)}}}"


def released(swarm: str, resource: str, token: str) -> str:
    """Receipt of a store lock's release that confirms a commit (a short PX): the release
    asked again after its answer was lost still says the lock was its caller's."""
    return f"{prefix(swarm)}released:{{{_tag(resource)}}}:{token}"


def attempts(swarm: str, task_id: str, retries: int = 0) -> str:
    """The starts of one delivery round of a message, a set of start ids (a Celery retry is a new
    round). Named ``starts:`` since it is a set: an ``attempts:`` counter of an older worker
    never meets it (WRONGTYPE)."""
    return f"{prefix(swarm)}starts:{task_id}:{retries}"


def presence(swarm: str, worker_id: str) -> str:
    """Node name of a running roster worker, with a short PX lease its main process renews."""
    return f"{prefix(swarm)}presence:{worker_id}"


def beat_lock(swarm: str) -> str:
    """Held by the one running beat, so a second beat anywhere refuses to start."""
    return f"{prefix(swarm)}beat"


def rate_bucket(swarm: str, provider: str) -> str:
    """Token bucket of an LLM provider's cluster-wide request rate."""
    return f"{prefix(swarm)}rate:{{{provider}}}"


def idempotency(swarm: str, scope: str, key: str) -> str:
    """Client-supplied idempotency keys (mission submits and similar)."""
    return f"{prefix(swarm)}idem:{scope}:{key}"


def done_marker(swarm: str, job: str, window: str) -> str:
    """Set when a once-per-window job finished for ``window``."""
    return f"{prefix(swarm)}done:{job}:{window}"
