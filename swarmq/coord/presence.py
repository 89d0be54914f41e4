"""Which roster workers are running, from a key each worker's main process renews.

A mission submit needs to know whether its worker is up. Asking Celery (a broadcast ping) costs
a round trip to every node and, for a worker that is down, the whole ping timeout; one ``MGET``
of presence keys costs one Redis round trip. A worker sets ``swarmq:<swarm>:presence:<id>`` to
its node name every :data:`REFRESH_SECONDS` with a :data:`TTL_SECONDS` lease and deletes it on
a warm shutdown, so a killed worker looks alive for at most the lease. A missing key proves
nothing (an older worker, one just starting): callers confirm those with a ping.
"""

from __future__ import annotations

from collections.abc import Iterable

import redis

from swarmq.coord import keys
from swarmq.coord.connection import lua_source

REFRESH_SECONDS = 2.0
TTL_SECONDS = 6.0


def announce(client: redis.Redis, swarm: str, worker_id: str, node: str) -> None:
    """Say ``worker_id`` runs as ``node`` for the next :data:`TTL_SECONDS`."""
    client.set(keys.presence(swarm, worker_id), node, px=int(TTL_SECONDS * 1000))


def withdraw(client: redis.Redis, swarm: str, worker_id: str, node: str) -> None:
    """Drop the key if it is still this node's (another node with the same id keeps its own)."""
    client.eval(lua_source("lock_release"), 1, keys.presence(swarm, worker_id), node)


def present(client: redis.Redis, swarm: str, worker_ids: Iterable[str]) -> set[str]:
    """The workers among ``worker_ids`` whose presence key is set."""
    ids = list(worker_ids)
    if not ids:
        return set()
    values = client.mget([keys.presence(swarm, w) for w in ids])
    return {w for w, value in zip(ids, values, strict=True) if value}
