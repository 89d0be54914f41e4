"""A task's prelude (attempt count + store lock, one pipeline) whose answer is lost after Redis
ran it: it is asked again with the same start id and lock token, and both answers are the
first's. Before, the task was requeued: the start was counted twice (one of the message's
``max_deliveries`` spent for nothing) and the lock stayed with a token nobody held until its
lease ran out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.cluster import Cluster
from swarmq.coord.connection import connect, lua_sha
from swarmq.coord.locks import RedisLocks
from swarmq.coord.settings import ClusterConfig
from swarmq.workers.prelude import open_prelude
from tests.coord.reply_loss import ReplyLoss


@pytest.fixture
def proxy() -> Iterator[ReplyLoss]:
    with ReplyLoss() as running:
        yield running


def _cluster(proxy: ReplyLoss, redis_url: str, swarm: str, tmp: Path) -> Cluster:
    url = proxy.url(int(redis_url.rsplit("/", 1)[1]))
    client = connect(url, timeout=5.0)
    config = ClusterConfig(url, swarm, {}, tmp, "cluster", tmp, (), tmp)
    return Cluster(config, client, _locks=RedisLocks(client, swarm, url=url, renew=False))


@pytest.mark.parametrize("locked", [False, True])
def test_a_lost_prelude_counts_one_start_and_keeps_its_lock(
    proxy: ReplyLoss,
    redis_url: str,
    redis_client: redis.Redis,
    swarm_name: str,
    tmp_path: Path,
    locked: bool,
) -> None:
    cluster = _cluster(proxy, redis_url, swarm_name, tmp_path)
    key = keys.attempts(swarm_name, "task-1")
    resource = "consolidation:x" if locked else None
    warm = open_prelude(cluster, attempts_key=key, attempts_ttl_ms=60_000)  # scripts loaded
    assert warm.deliveries == 1
    redis_client.delete(key)

    proxy.arm(lua_sha("attempts").encode(), key.encode())
    prelude = open_prelude(
        cluster, attempts_key=key, attempts_ttl_ms=60_000, lock_resource=resource
    )
    assert len(proxy.lost) == 1, "the pipeline ran and its answer was lost"
    assert prelude.deliveries == 1
    assert redis_client.scard(key) == 1
    if locked:
        assert prelude.lease is not None
        assert redis_client.get(keys.lock(swarm_name, "consolidation:x")) == (
            prelude.lease.token.encode()
        )
        assert cluster.locks.release(prelude.lease)


def test_a_redelivery_is_a_new_start(
    redis_url: str, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    client = connect(redis_url)
    config = ClusterConfig(redis_url, swarm_name, {}, tmp_path, "cluster", tmp_path, (), tmp_path)
    cluster = Cluster(config, client, _locks=RedisLocks(client, swarm_name, renew=False))
    key = keys.attempts(swarm_name, "task-2")
    counts = [
        open_prelude(cluster, attempts_key=key, attempts_ttl_ms=60_000).deliveries for _ in range(3)
    ]
    assert counts == [1, 2, 3]
