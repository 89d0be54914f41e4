"""A worker checks that it answers its own remote-control ping, and re-opens its mailbox if not.

Celery's remote control (``ping``, ``inspect``, ``shutdown``: what ``swarmq status`` and
``swarmq down --all`` send) reaches a worker through its pidbox, a Redis pub/sub subscription
read by the worker's event loop. After a Redis restart the worker reconnects and consumes
tasks again, yet in the broker chaos test (Redis SIGKILLed three times under load) every
worker sometimes stayed deaf to ``ping`` for good while Redis listed their subscriptions:
replies never came although the workers ran missions (4 of 21 runs before this step). Neither
Celery 5.7 nor kombu 5.7 has a setting that makes the pidbox consumer start over, and the
loss happens below them, so the worker checks the one property that matters: a ping it sends
to itself, over a connection of its own, comes back.

While the consumer runs, a daemon thread pings this worker's own node: every
:data:`SETTLE_EVERY_SECONDS` in the first :data:`SETTLE_SECONDS` after each (re)connection
(when the loss happens), every :data:`CHECK_EVERY_SECONDS` after. :data:`MISSES_BEFORE_RESET`
unanswered pings in a row, on one and the same broker connection, make the event loop close the
pidbox channel and open a new one (``Pidbox.reset``: the consumer is declared again on a fresh
pub/sub connection). A ping that cannot be sent (Redis away) proves nothing and counts as
neither. The thread does no more than publish a ping and wait; the reset runs on the event
loop thread (``hub.call_soon``), the only one that may touch the consumer's channels.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import bootsteps
from celery.worker.consumer.control import Control

logger = logging.getLogger(__name__)

SETTLE_SECONDS = 60.0
SETTLE_EVERY_SECONDS = 2.0
CHECK_EVERY_SECONDS = 30.0
PING_TIMEOUT_SECONDS = 1.0
MISSES_BEFORE_RESET = 2
UNSENT_REPORTED = 5
"""Self-pings in a row that could not be sent while connected before it is worth a warning."""
GRACE_SECONDS = 2.0
"""A ping sent sooner after this step started may meet a mailbox still being declared."""


class PidboxWatch(bootsteps.StartStopStep):  # type: ignore[misc]
    """Consumer step: see the module docstring. Started after the remote-control step, so each
    (re)connection restarts the settle period."""

    requires = (Control,)
    label = "PidboxWatch"

    def __init__(self, c: Any, **kwargs: Any) -> None:
        super().__init__(c, **kwargs)
        self.consumer = c
        self.connected_at: float | None = None
        """When this step last started (the mailbox was just declared); ``None`` while the
        consumer restarts."""
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.resets = 0
        self.unconfirmed = False
        self.unsent = 0

    def include_if(self, c: Any) -> bool:
        # The reset must run on the event loop; without one (threads pool) there is no safe way.
        return bool(c.app.conf.worker_enable_remote_control) and c.hub is not None

    def start(self, c: Any) -> None:
        self.connected_at = time.monotonic()
        if self.thread is None:
            self.thread = threading.Thread(target=self._watch, name="pidbox-watch", daemon=True)
            self.thread.start()

    def stop(self, c: Any) -> None:
        self.connected_at = None  # the consumer restarts: its mailbox is being replaced

    def shutdown(self, c: Any) -> None:
        self.connected_at = None
        self.stopping.set()

    def _interval(self) -> float:
        since = self.connected_at
        settling = since is None or time.monotonic() - since < SETTLE_SECONDS
        return SETTLE_EVERY_SECONDS if settling else CHECK_EVERY_SECONDS

    def _watch(self) -> None:
        misses, counted_since = 0, None
        while not self.stopping.wait(self._interval()):
            since = self.connected_at
            if since is None or time.monotonic() - since < GRACE_SECONDS:
                continue  # restarting or just restarted: the consumer's own restart comes first
            if since != counted_since:
                misses, counted_since = 0, since  # misses count on one connection only
            answered = self._answers()
            if answered is None or self.connected_at != since:
                continue  # not sent, or the consumer restarted meanwhile: proves nothing
            c = self.consumer
            if answered and self.unconfirmed:
                self.unconfirmed = False
                logger.info("remote control: %s answers again", c.hostname)
            misses = 0 if answered else misses + 1
            if misses >= MISSES_BEFORE_RESET:
                misses = 0
                self.resets += 1
                self.unconfirmed = True
                logger.warning(
                    "remote control: %s did not answer its own ping %d times in a row; "
                    "opening its pidbox again (reset %d)",
                    self.consumer.hostname,
                    MISSES_BEFORE_RESET,
                    self.resets,
                )
                self.consumer.hub.call_soon(self._reset)

    def _answers(self) -> bool | None:
        """Whether this node answered a ping; ``None`` when the ping could not be sent."""
        c = self.consumer
        try:
            with c.app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=1)
                replies = c.app.control.ping(
                    destination=[c.hostname], timeout=PING_TIMEOUT_SECONDS, connection=connection
                )
        except Exception as exc:  # the broker is away or failing: nothing to judge
            self.unsent += 1
            log = logger.warning if self.unsent == UNSENT_REPORTED else logger.debug
            log("remote control: self-ping not sent %d times in a row: %r", self.unsent, exc)
            return None
        self.unsent = 0
        return any(c.hostname in reply for reply in replies or [])

    def _reset(self) -> None:
        for step in self.consumer.steps:
            if isinstance(step, Control):
                try:
                    step.box.reset()
                except Exception:  # the next check tries again
                    logger.warning("remote control: reopening the pidbox failed", exc_info=True)
                return
