"""Every other coord script whose answer is lost after Redis ran it (a Redis SIGKILLed between
its AOF fsync and its reply): nothing asks it again by itself, so the loss reaches the caller
as a clear error, and the script's effect happened exactly once (docs/architecture.md, "Asking
Redis twice"). The store locks' own cases are in test_locks_reply_loss.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.connection import connect, lua_sha, script
from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_types import LeaseLost, QuotaExhausted, QuotaUnavailable, Reservation
from swarmq.coord.ratelimit import RateLimitUnavailable, RequestRateLimiter
from tests.coord.reply_loss import ReplyLoss


@pytest.fixture
def proxy() -> Iterator[ReplyLoss]:
    with ReplyLoss() as running:
        yield running


def _through(proxy: ReplyLoss, redis_url: str) -> redis.Redis:
    """swarmq's own client (:func:`connect`), through the proxy, on this test's database."""
    return connect(proxy.url(int(redis_url.rsplit("/", 1)[1])), timeout=5.0)


def test_the_client_never_sends_a_script_again(
    proxy: ReplyLoss, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    client = _through(proxy, redis_url)
    key = f"{keys.prefix(swarm_name)}counter"
    counting = script(client, "attempts")
    counting(keys=[key], args=[60_000, "warm"])  # loaded: the next call is one EVALSHA
    proxy.arm(lua_sha("attempts").encode(), b"lost-start")
    with pytest.raises(redis.ConnectionError):
        counting(keys=[key], args=[60_000, "lost-start"])
    assert len(proxy.lost) == 1
    assert redis_client.smembers(key) == {b"warm", b"lost-start"}  # it ran, once
    assert client.get_connection_kwargs()["retry"].get_retries() == 0


def test_a_lost_start_is_asked_again_and_counted_once(
    proxy: ReplyLoss, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    """Before, the lost answer raised QuotaUnavailable: the slot was spent (Redis and the
    journal counted it) and the call never went out."""
    gate = QuotaGate(
        _through(proxy, redis_url), swarm_name, {"q": QuotaConfig(max_calls_per_day=5)}
    )
    gate.start(gate.reserve("q"))  # the window's keys exist, the scripts are loaded
    reservation = gate.reserve("q")
    used_key, held_key = gate._window_keys(reservation)
    proxy.arm(lua_sha("quota_start").encode(), reservation.token.encode())
    assert gate.start(reservation) == 2  # the first ask's answer
    assert len(proxy.lost) == 1, "the start ran and its answer was lost"
    assert int(redis_client.get(used_key) or 0) == 2  # counted once
    assert redis_client.zcard(held_key) == 0
    with pytest.raises(LeaseLost):  # a released (never started) token still hears no
        gate.start(Reservation("q", "never", reservation.window, 0, reservation.keys))


def test_a_lost_reserve_is_asked_again_and_holds_one_slot(
    proxy: ReplyLoss, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    """Before, the lost answer raised QuotaUnavailable and the slot it had taken stayed held,
    by nobody, until its lease ran out (600 s by default): a full quota refused every call
    for that long."""
    gate = QuotaGate(
        _through(proxy, redis_url), swarm_name, {"q": QuotaConfig(max_calls_per_day=2)}
    )
    first = gate.reserve("q")
    used_key, held_key = gate._window_keys(first)
    proxy.arm(lua_sha("quota_reserve").encode(), used_key)
    second = gate.reserve("q")
    assert len(proxy.lost) == 1, "the reserve ran and its answer was lost"
    assert redis_client.zcard(held_key) == 2  # the two reservations, nothing more
    assert redis_client.zscore(held_key, second.token) == second.lease_until_ms
    with pytest.raises(QuotaExhausted):  # both slots are the callers', none is lost
        gate.reserve("q")
    assert gate.start(second) == 1
    assert gate.release(first)
    assert gate.reserve("q").token  # the released slot is free again


def test_a_reserve_lost_for_good_is_unavailable_and_holds_one_slot(
    proxy: ReplyLoss, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    gate = QuotaGate(
        _through(proxy, redis_url), swarm_name, {"q": QuotaConfig(max_calls_per_day=5)}
    )
    used_key, held_key = gate._window_keys(gate.reserve("q"))
    proxy.arm(lua_sha("quota_reserve").encode(), used_key, times=3)  # every ask unanswered
    with pytest.raises(QuotaUnavailable, match="failing closed"):
        gate.reserve("q")
    assert len(proxy.lost) == 3
    assert redis_client.zcard(held_key) == 2  # one slot more held, until its lease ends


def test_a_lost_rate_token_is_unavailable_and_taken_once(
    proxy: ReplyLoss, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    limiter = RequestRateLimiter(_through(proxy, redis_url), swarm_name, "p:m", 60, burst=3)
    assert limiter.try_acquire() == 0.0
    proxy.arm(lua_sha("ratelimit").encode())
    with pytest.raises(RateLimitUnavailable, match="unreachable"):
        limiter.try_acquire()
    assert len(proxy.lost) == 1
    tokens = float(redis_client.hget(keys.rate_bucket(swarm_name, "p:m"), "tokens") or -1)
    assert 0.9 <= tokens < 1.2  # 3 - 2 taken (plus a little refill), not 3 - 3
