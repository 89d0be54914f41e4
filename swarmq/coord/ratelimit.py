"""A request rate limit shared by every worker in the cluster: a token bucket in Redis.

Celery's ``rate_limit`` is per worker; a provider's limit is per account, so the bucket lives in
Redis (``ratelimit.lua``: refill by Redis ``TIME``, take a token or say how long to wait, in one
round trip). Bursts are capped at one second's worth of requests (at least one request).
Errors subclass builtins (``TimeoutError``, ``ConnectionError``) so :mod:`swarmq.llm` can handle
them without importing anything from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import redis

from swarmq.coord import keys
from swarmq.coord.connection import TRANSIENT, redact, script
from swarmq.errors import Unavailable


class RateLimitTimeout(Unavailable, TimeoutError):
    """Waiting for a token would exceed the caller's patience."""


class RateLimitUnavailable(Unavailable, ConnectionError):
    """Redis cannot be reached: fail closed, no request goes out."""


class RequestRateLimiter:
    def __init__(
        self,
        client: redis.Redis,
        swarm: str,
        bucket: str,
        requests_per_minute: float,
        *,
        burst: float | None = None,
        url: str = "redis",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.client = client
        self.key = keys.rate_bucket(swarm, bucket)
        self.rate_per_second = requests_per_minute / 60.0
        self.capacity = burst if burst is not None else max(1.0, self.rate_per_second)
        self.url = redact(url)
        self.sleep = sleep
        self._script = script(client, "ratelimit")

    def try_acquire(self) -> float:
        """Take a token now (returns 0.0) or return the seconds until one will exist."""
        try:
            granted, wait_ms = self._script(
                keys=[self.key], args=[self.capacity, self.rate_per_second, 1]
            )
        except TRANSIENT as exc:
            raise RateLimitUnavailable(
                f"request rate limit cannot be checked: Redis at {self.url} is unreachable ({exc})"
            ) from exc
        return 0.0 if int(granted) == 1 else max(0.001, int(wait_ms) / 1000.0)

    def acquire(self, timeout: float) -> float:
        """Block until a request may go out; returns the seconds waited."""
        began = time.monotonic()
        while True:
            wait = self.try_acquire()
            if wait == 0.0:
                return time.monotonic() - began
            waited = time.monotonic() - began
            if waited + wait > timeout:
                raise RateLimitTimeout(
                    f"the next request slot is {wait:.1f}s away and {timeout:.1f}s was the limit "
                    f"({self.rate_per_second * 60:g} requests/minute across the cluster)"
                )
            self.sleep(wait)
