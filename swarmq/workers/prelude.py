"""One round trip at the start of a task: attempt counter and store lock.

Each is one Lua script; sent one after another they cost two round trips before the body
runs, which on short store-locked jobs is a visible share of the task. Pipelined, they cost
one. A reply that needs more (the lock is busy, a script is not cached) falls back to the
ordinary blocking call for that part only.

A connection lost before the answers came back is asked again, briefly, with the same start id
and lock token: both scripts answer the second ask as they did the first (the start is counted
once, the lock is this start's), so a Redis that ran the pipeline and died before replying
neither spends one of the message's ``max_deliveries`` for nothing nor leaves its lock to a
token nobody holds. Only when Redis stays silent does the caller requeue the message; that
redelivery is a new start and counts again (docs/architecture.md, "Asking Redis twice").
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoScriptError

from swarmq.coord.cluster import Cluster
from swarmq.coord.connection import ASK_AGAIN_PAUSES, asked_again, lua_sha, script
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
    pauses: tuple[float, ...] = ASK_AGAIN_PAUSES,
) -> Prelude:
    """Send both scripts in one pipeline; raises Redis's connection errors once ``pauses`` are
    spent."""
    client = cluster.client
    start_id = uuid.uuid4().hex
    lock: tuple[str, list[str], list[Any], str] | None = None
    if lock_resource is not None:
        lock = cluster.locks.acquire_call(lock_resource)

    def ask() -> list[Any]:
        pipe = client.pipeline(transaction=False)
        pipe.evalsha(lua_sha("attempts"), 1, attempts_key, attempts_ttl_ms, start_id)
        if lock is not None:
            pipe.evalsha(lock[0], len(lock[1]), *lock[1], *lock[2])
        return pipe.execute(raise_on_error=False)

    replies = iter(asked_again(ask, pauses))

    counted = next(replies)
    if isinstance(counted, NoScriptError):  # a restarted Redis lost its script cache
        counted = script(client, "attempts")(keys=[attempts_key], args=[attempts_ttl_ms, start_id])
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
