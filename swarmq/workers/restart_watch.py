"""A worker whose consumer kept a connection to a Redis that restarted reconnects (run id).

In the broker chaos test (Redis SIGKILLed and restarted under load, issue 31) a worker now and
then heard nothing of a restart: no "Connection to broker lost", no reconnect, no task received
and no ping answered, while its mission completed in the pool and the other workers reconnected
within seconds. Its self-ping (:mod:`.pidbox_watch`) saw it and reopened its pidbox again and
again, which cannot help: the pidbox is read through the same consumer connection. Celery
recovers from a lost connection only when the loss reaches its consumer loop as an error. In the
case caught in the act the loop itself was blocked in a read without a timeout (fixed by the
broker's ``socket_timeout``, :mod:`.config`); this step is the net for a loop that runs but
kept a connection to a server that is gone.

The worker asks Redis itself: ``INFO server`` carries ``run_id``, a random id drawn at each
server start. The id is read when the consumer (re)connects (this step's ``start``) and every
:data:`CHECK_EVERY_SECONDS` by a daemon thread, each time over a short-lived connection of its
own. When it differs from the one the consumer connected to and the consumer has not restarted
by itself within :data:`GRACE_SECONDS` (Celery notices a loss at its next read of the socket,
at once when it does at all), the event loop raises a connection error, and Celery does what it
does for any lost connection: close it, reconnect, declare the queues and the pidbox again. A
task running meanwhile keeps running (``worker_cancel_long_running_tasks_on_connection_loss``
is off, :mod:`.config`). A blocked loop runs the call only once it is free again. Redis brokers
only: RabbitMQ's transport did not show the defect, and its server has no such id.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis
from celery import bootsteps
from celery.worker.consumer.tasks import Tasks

logger = logging.getLogger(__name__)

CHECK_EVERY_SECONDS = 2.0
GRACE_SECONDS = 5.0
"""How long a consumer may take to notice a restart itself before it is made to."""
TIMEOUT_SECONDS = 2.0


class BrokerRestarted(ConnectionResetError):
    """Raised on the event loop: the broker restarted under a consumer that did not notice.
    An ``OSError``, so it is one of Celery's connection errors and restarts the consumer."""


def run_id(url: str) -> str | None:
    """The Redis server's ``run_id``, or None when it does not answer."""
    client = redis.Redis.from_url(
        url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
    )
    try:
        found = client.info("server").get("run_id")
    except (redis.RedisError, OSError):
        return None
    finally:
        client.close()
    return str(found) if found else None


class RestartWatch(bootsteps.StartStopStep):  # type: ignore[misc]
    """Consumer step: see the module docstring. After the task consumer, so ``start`` runs once
    the consumer's connection is up."""

    requires = (Tasks,)
    label = "RestartWatch"

    def __init__(self, c: Any, **kwargs: Any) -> None:
        super().__init__(c, **kwargs)
        self.consumer = c
        self.url = str(c.app.conf.broker_url or "")
        self.connected_to: str | None = None
        """The server run id the consumer's connection was made to (None: not known yet)."""
        self.connected_at: float | None = None
        """When the consumer last (re)connected; None while it restarts."""
        self.changed_at: float | None = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.forced = 0

    def include_if(self, c: Any) -> bool:
        broker = str(c.app.conf.broker_url or "")
        return c.hub is not None and broker.startswith(("redis://", "rediss://"))

    def start(self, c: Any) -> None:
        self.connected_to = run_id(self.url)
        self.changed_at = None
        self.connected_at = time.monotonic()
        if self.thread is None:
            self.thread = threading.Thread(
                target=self._watch, name="broker-restart-watch", daemon=True
            )
            self.thread.start()

    def stop(self, c: Any) -> None:
        self.connected_at = None

    def shutdown(self, c: Any) -> None:
        self.connected_at = None
        self.stopping.set()

    def _watch(self) -> None:
        while not self.stopping.wait(CHECK_EVERY_SECONDS):
            self.check()

    def check(self) -> bool:
        """One look; True when it asked the event loop to reconnect."""
        since = self.connected_at
        if since is None:
            return False  # restarting: the consumer's own reconnect comes first
        now_id = run_id(self.url)
        if now_id is None or self.connected_at != since:
            return False  # Redis away (nothing to compare) or the consumer restarted meanwhile
        if self.connected_to is None:
            self.connected_to = now_id  # unknown at start: the first answer after it
            return False
        if now_id == self.connected_to:
            self.changed_at = None
            return False
        now = time.monotonic()
        if self.changed_at is None:
            self.changed_at = now
        if now - self.changed_at < GRACE_SECONDS:
            return False
        self.forced += 1
        self.changed_at = None
        logger.warning(
            "broker: Redis restarted (run id %s, was %s) and this worker's consumer did not "
            "notice in %.0fs; reconnecting it (forced %d)",
            now_id[:8],
            self.connected_to[:8],
            GRACE_SECONDS,
            self.forced,
        )
        self.consumer.hub.call_soon(self._reconnect, now_id)
        return True

    def _reconnect(self, now_id: str) -> None:
        raise BrokerRestarted(
            f"the broker restarted (Redis run id {now_id[:8]}) under a consumer that kept its "
            "old connection"
        )
