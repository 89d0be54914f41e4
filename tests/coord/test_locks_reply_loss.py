"""Store lock steps whose answer is lost after Redis ran them (a Redis SIGKILLed between its AOF
fsync and its reply): the lock asks again once Redis answers (its outage grace), and the second
answer must be the first one's. Before, a release that confirmed a commit came back "not held" (the commit was
called unconfirmed though the lock held through it), and a lost acquire left the lock to its
own 30 s lease."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.connection import lua_sha
from swarmq.coord.locks import RedisLocks
from swarmq.storage.locking import confirm_by_release
from tests.coord.reply_loss import ReplyLoss

DB = 15


@pytest.fixture
def proxy() -> Iterator[ReplyLoss]:
    with ReplyLoss() as running:
        yield running


@pytest.fixture
def swarm() -> Iterator[str]:
    name = f"replyloss-{uuid.uuid4().hex[:8]}"
    yield name
    direct = redis.Redis.from_url(f"redis://127.0.0.1:6379/{DB}")
    for key in direct.scan_iter(f"{keys.prefix(name)}*"):
        direct.delete(key)


def _locks(proxy: ReplyLoss, swarm: str) -> RedisLocks:
    """As a mission run holds them: asking again while Redis does not answer."""
    client = redis.Redis.from_url(proxy.url(DB), socket_connect_timeout=2, socket_timeout=5)
    return RedisLocks(client, swarm, url=proxy.url(DB), outage_grace_seconds=5.0)


def test_a_release_whose_answer_was_lost_still_confirms_the_commit(
    proxy: ReplyLoss, swarm: str
) -> None:
    locks = _locks(proxy, swarm)
    lock_key = keys.lock(swarm, "r").encode()
    with locks.hold("r", timeout=5) as lease:
        lease.validate(0)  # the commit's fence check
        proxy.arm(lua_sha("lock_release").encode(), lock_key)
        confirm_by_release(lease)  # the commit is the last act: its release confirms it
    assert len(proxy.lost) == 1, "the release ran and its answer was lost"
    direct = redis.Redis.from_url(f"redis://127.0.0.1:6379/{DB}")
    assert direct.get(lock_key) is None  # released, once
    with locks.hold("r", timeout=0):  # free at once
        pass


def test_a_receipt_outlives_the_next_holder(proxy: ReplyLoss, swarm: str) -> None:
    """The release asked again after another holder took the lock (and released it) still
    says it held the lock at its release; a holder whose lease lapsed unreleased still hears no."""
    locks = _locks(proxy, swarm)
    lock_key, receipt = keys.lock(swarm, "r"), keys.released(swarm, "r", "mine")
    release = locks._release
    assert locks._acquire(keys=[lock_key, keys.fence(swarm, "r")], args=["mine", 30_000, 60_000])
    assert release(keys=[lock_key, receipt], args=["mine", 60_000]) == 1
    with locks.hold("r", timeout=5):  # the next holder, while the answer was on its way
        pass
    assert release(keys=[lock_key, receipt], args=["mine", 60_000]) == 2  # asked again: receipt
    lapsed = keys.released(swarm, "r", "lapsed")
    assert release(keys=[lock_key, lapsed], args=["lapsed", 60_000]) == 0
    assert release(keys=[lock_key], args=["mine"]) == 0  # no receipt asked for: as before


def test_an_acquire_whose_answer_was_lost_holds_the_lock_at_once(
    proxy: ReplyLoss, swarm: str
) -> None:
    locks = _locks(proxy, swarm)
    proxy.arm(lua_sha("lock_acquire").encode(), keys.lock(swarm, "r").encode())
    started = time.monotonic()
    with locks.hold("r", timeout=5) as lease:  # before: its own lost lease, 30 s
        assert len(proxy.lost) == 1, "the acquire ran and its answer was lost"
        assert lease.fencing_token == 1  # the counter this acquire set, not a second one
        assert lease.validate(0) == 1
    assert time.monotonic() - started < 4
    with locks.hold("r", timeout=0):  # released
        pass
