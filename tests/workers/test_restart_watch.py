"""A consumer that kept its connection across a Redis restart is made to reconnect.

A real Redis server of the test's own is SIGKILLed and restarted; the watch is the step a worker
adds (``workers/restart_watch.py``), given a real kombu hub as a worker's consumer has: a restart
the consumer did not notice within the grace makes the hub raise a connection error (what
Celery's consumer restarts on); a consumer that reconnected by itself is left alone.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kombu.asynchronous.hub import Hub

from swarmq.workers import restart_watch
from swarmq.workers.restart_watch import BrokerRestarted, RestartWatch, run_id
from tests.coord.redis_server import RedisServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    running = RedisServer(tmp_path).start()
    try:
        yield running
    finally:
        running.stop()


def _consumer(url: str) -> Any:
    """What the step reads of a worker's consumer: its app's broker URL and its hub."""
    return SimpleNamespace(app=SimpleNamespace(conf=SimpleNamespace(broker_url=url)), hub=Hub())


def _watch(consumer: Any) -> RestartWatch:
    watch = RestartWatch(consumer)
    watch.thread = object()  # type: ignore[assignment]  # checks are driven by the test
    watch.start(consumer)
    return watch


def test_a_restart_the_consumer_missed_makes_its_loop_raise_a_connection_error(
    server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(restart_watch, "GRACE_SECONDS", 0.5)
    consumer = _consumer(server.url)
    watch = _watch(consumer)
    before = watch.connected_to
    assert before is not None and watch.check() is False  # same server: nothing to do
    server.kill()
    assert watch.check() is False  # Redis away: nothing to compare
    server.start()
    assert run_id(server.url) not in (None, before)
    assert watch.check() is False  # within the grace: Celery may still notice by itself
    time.sleep(0.6)
    assert watch.check() is True
    with pytest.raises(BrokerRestarted) as raised:
        next(consumer.hub.create_loop())  # what the worker's event loop runs next
    assert isinstance(raised.value, ConnectionError)  # one of Celery's connection errors


def test_a_consumer_that_reconnected_by_itself_is_left_alone(
    server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(restart_watch, "GRACE_SECONDS", 0.0)
    consumer = _consumer(server.url)
    watch = _watch(consumer)
    server.kill()
    watch.stop(consumer)  # Celery saw the loss: the consumer restarts
    server.start()
    assert watch.check() is False
    watch.start(consumer)  # reconnected, to the new server
    assert watch.check() is False and watch.forced == 0
