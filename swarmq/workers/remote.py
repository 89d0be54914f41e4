"""Remote control (ping, inspect) over a broker connection of its own, never a pooled one.

Celery's ``app.control`` borrows a connection from kombu's per-process pool, keyed by broker
URL and shared by every app in the process, and reads the replies on that connection's default
channel. With the Redis transport, a client outside a worker's event loop does not hear about
its reply socket being reconnected (kombu hooks the disconnect only for the asynchronous worker
loop): after a Redis restart the pooled channel can keep a BRPOP marked in flight on a socket
that is closed, so it never sends another, and every later broadcast from the process gets no
reply though the replies are in Redis (reproduced in tests/chaos/test_broker_chaos.py: all three
workers' replies queued, the channel polling a closed descriptor, for good). A long-lived
process (the beat's reaper, the API, a mission client) then sees every worker as gone.

A connection opened for the call and closed after it has no such state to go stale; it costs
one TCP connect per call, against broadcasts that wait up to a second for replies anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from celery import Celery


@contextmanager
def connection(app: Celery) -> Iterator[Any]:
    """A new broker connection for one round of remote control (pass it as ``connection=``)."""
    with app.connection_for_write() as conn:
        yield conn


def ping(app: Celery, *, timeout: float, **options: Any) -> list[dict[str, Any]]:
    """``app.control.ping`` on a connection of its own; ``options`` as Celery takes them
    (``destination``, ``limit``, ``pattern``, ``matcher``)."""
    with connection(app) as conn:
        return list(app.control.ping(timeout=timeout, connection=conn, **options) or [])


def answering(app: Celery, *, timeout: float, **options: Any) -> set[str]:
    """The nodes (``<worker>@<host>``) that answered a :func:`ping`."""
    return {node for reply in ping(app, timeout=timeout, **options) for node in reply}
