"""The cluster-wide request rate limit: one token bucket in Redis shared by every limiter."""

from __future__ import annotations

import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from swarmq.coord import keys
from swarmq.coord.ratelimit import RateLimitTimeout, RateLimitUnavailable, RequestRateLimiter


def test_bucket_is_shared_across_limiters(
    redis_client: redis.Redis, redis_url: str, swarm_name: str
) -> None:
    # 600/minute = 10/s with a burst of 10: 10 immediate grants, then a wait, whoever asks.
    a = RequestRateLimiter(redis_client, swarm_name, "openai:test", 600)
    other = redis.Redis.from_url(redis_url)
    b = RequestRateLimiter(other, swarm_name, "openai:test", 600)
    grants = [lim.try_acquire() for lim in (a, b) * 5]
    assert grants == [0.0] * 10
    assert b.try_acquire() > 0
    began = time.monotonic()
    for _ in range(5):
        a.acquire(timeout=5)
    assert 0.35 <= time.monotonic() - began < 2.0
    assert redis_client.pttl(keys.rate_bucket(swarm_name, "openai:test")) > 0
    b.client.close()


def test_timeout_and_unavailable(redis_client: redis.Redis, swarm_name: str) -> None:
    slow = RequestRateLimiter(redis_client, swarm_name, "command:agent", 1)  # one per minute
    assert slow.acquire(timeout=1) < 0.1
    with pytest.raises(RateLimitTimeout, match="1 requests/minute"):
        slow.acquire(timeout=1)
    dead_client = redis.Redis(port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0))
    dead = RequestRateLimiter(dead_client, swarm_name, "x", 60)
    with pytest.raises(RateLimitUnavailable, match="unreachable"):
        dead.acquire(timeout=1)
    assert isinstance(RateLimitTimeout("x"), TimeoutError) and isinstance(
        RateLimitUnavailable("x"), ConnectionError
    )
