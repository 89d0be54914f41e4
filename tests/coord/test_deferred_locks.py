"""Locks whose Redis is asked at the first hold: the cluster's locks once it answers, a refusal
naming the URL (asked once per process) when it does not, same-host locks as the roster says."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.lockmode import DeferredLocks, store_locks
from swarmq.coord.locks import RedisLocks
from swarmq.roster.loader import load_roster
from swarmq.storage.locking import LocalLocks, LockError, file_resource
from tests.coord.redis_server import free_port
from tests.support import write_roster


def test_the_first_hold_connects_and_holds_the_clusters_lock(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    config = load_roster(write_roster(tmp_path, swarm_name, redis_url)).cluster_config()
    locks = store_locks(config, deferred=True)
    assert isinstance(locks, DeferredLocks)
    resource = file_resource(tmp_path / "project" / ".swarm" / "knowledge.jsonl")
    with locks.hold(resource, timeout=5) as first:
        assert redis_client.exists(keys.lock(swarm_name, resource))  # held in Redis
    with locks.hold(resource, timeout=5) as second:
        assert second.fencing_token > first.fencing_token
    assert isinstance(locks.resolved(), RedisLocks)


def test_an_unreachable_redis_refuses_every_hold_after_one_attempt(
    tmp_path: Path, swarm_name: str
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    config = load_roster(write_roster(tmp_path, swarm_name, url)).cluster_config()
    locks = store_locks(config, deferred=True)
    resource = file_resource(tmp_path / "project" / ".swarm" / "knowledge.jsonl")
    for _ in range(2):
        started = time.monotonic()
        with pytest.raises(LockError) as refused, locks.hold(resource, timeout=1):
            pytest.fail("held a lock without Redis")
        assert url in str(refused.value) and "locks: single-host" in str(refused.value)
    assert time.monotonic() - started < 0.5  # the second refusal did not connect again


def test_single_host_rosters_get_same_host_locks_whatever_is_deferred(
    tmp_path: Path, swarm_name: str
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    roster = write_roster(tmp_path, swarm_name, url, locks="single-host")
    assert isinstance(store_locks(load_roster(roster).cluster_config(), deferred=True), LocalLocks)
