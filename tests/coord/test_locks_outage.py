"""Store locks across a Redis restart: with an outage grace every lock step waits for Redis to
answer again (the write is never repeated); without one they refuse at once, as before."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.locks import RedisLocks, RedisUnreachable
from swarmq.storage.locking import FencedOff
from tests.coord.redis_server import RedisServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    port = int(os.environ.get("SWARMQ_CHAOS_REDIS_PORT") or 0) or None
    running = RedisServer(tmp_path, port=port, durable=True).start()
    try:
        yield running
    finally:
        running.stop()


def _back_in(server: RedisServer, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), server.start()))
    thread.start()
    return thread


def _locks(server: RedisServer, grace: float) -> RedisLocks:
    client = redis.Redis.from_url(server.url, socket_connect_timeout=0.5, socket_timeout=2)
    return RedisLocks(client, "outage", url=server.url, outage_grace_seconds=grace)


def test_without_a_grace_an_unreachable_redis_refuses_at_once(server: RedisServer) -> None:
    locks = _locks(server, 0.0)
    server.kill()
    started = time.monotonic()
    with pytest.raises(RedisUnreachable, match="is unreachable"), locks.hold("r", timeout=5):
        pass
    assert time.monotonic() - started < 3


def test_taking_a_lock_waits_for_redis_to_return(server: RedisServer) -> None:
    locks = _locks(server, 0.0).with_outage_grace(20.0)
    server.kill()
    back = _back_in(server, 1.0)
    with locks.hold("r", timeout=5) as lease:
        assert lease.validate(0) >= 1
    back.join()
    assert redis.Redis.from_url(server.url).get(keys.lock("outage", "r")) is None  # released


def test_a_restart_inside_a_hold_delays_the_fence_check_and_release(server: RedisServer) -> None:
    locks = _locks(server, 0.0).with_outage_grace(20.0)
    with locks.hold("r", timeout=5) as lease:
        server.kill()  # the lease is in the AOF: it is still this holder's when Redis is back
        back = _back_in(server, 1.0)
        assert lease.validate(0) >= 1  # asked again until Redis answered
        back.join()
    one_try = _locks(server, 0.0)
    with one_try.hold("r", timeout=0):  # released: free at once
        pass


def test_a_lease_that_lapsed_during_the_outage_is_still_refused(server: RedisServer) -> None:
    client = redis.Redis.from_url(server.url, socket_connect_timeout=0.5, socket_timeout=2)
    locks = RedisLocks(
        client, "outage", url=server.url, lease_seconds=1.0, renew=False, outage_grace_seconds=20
    )
    with pytest.raises(FencedOff), locks.hold("r", timeout=5) as lease:
        server.kill()
        back = _back_in(server, 2.0)  # the 1 s lease expires (Redis keeps wall-clock expiries)
        try:
            lease.validate(0)
        finally:
            back.join()
