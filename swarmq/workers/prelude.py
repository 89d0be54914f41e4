"""One round trip at the start of a task: attempt counter and store lock.

Each is one Lua script; sent one after another they cost two round trips before the body
runs, which on short store-locked jobs is a visible share of the task. Pipelined, they cost
one. A reply that needs more (the lock is busy, a script is not cached) falls back to the
ordinary blocking call for that part only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoScriptError

from swarmq.coord.cluster import Cluster
from swarmq.coord.connection import lua_sha, script
from swarmq.coord.locks import RedisLease


@dataclass
class Prelude:
    deliveries: int
    """How many times this delivery round has started, this start included."""
    lease: RedisLease | None = None
    """The store lock, when the pipelined try got it."""


def open_prelude(
    cluster: Cluster,
    *,
    attempts_key: str,
    attempts_ttl_ms: int,
    lock_resource: str | None = None,
) -> Prelude:
    """Send both scripts in one pipeline; raises Redis's connection errors as they come."""
    client = cluster.client
    pipe = client.pipeline(transaction=False)
    pipe.evalsha(lua_sha("attempts"), 1, attempts_key, attempts_ttl_ms)
    lock: tuple[str, list[str], list[Any], str] | None = None
    if lock_resource is not None:
        lock = cluster.locks.acquire_call(lock_resource)
        pipe.evalsha(lock[0], len(lock[1]), *lock[1], *lock[2])
    replies = iter(pipe.execute(raise_on_error=False))

    counted = next(replies)
    if isinstance(counted, NoScriptError):  # a restarted Redis lost its script cache
        counted = script(client, "attempts")(keys=[attempts_key], args=[attempts_ttl_ms])
    elif isinstance(counted, Exception):
        raise counted
    prelude = Prelude(int(counted))
    if lock is not None and lock_resource is not None:
        fencing = next(replies)
        if isinstance(fencing, Exception) and not isinstance(fencing, NoScriptError):
            raise fencing
        if isinstance(fencing, int) and fencing:
            prelude.lease = cluster.locks.adopt(lock_resource, lock[3], fencing)
    return prelude
