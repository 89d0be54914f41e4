"""uvicorn's h11 protocol with a deadline for the request head and a cap on connections.

uvicorn arms no timer before a connection's first request: a client that sends its headers a
byte at a time holds its connection, and a file descriptor, for as long as it likes. 1,100 such
clients under a 1,024-descriptor limit locked every other client out of ``swarmq api`` for 40 s
(``limit_concurrency`` cannot help: it is checked when a request head is complete). So:

* a connection has ``header_timeout`` seconds to send a whole request head, from when it is
  accepted and again after each response; one still waiting is closed;
* at most ``max_connections`` are open (``serve`` keeps it under the process's descriptor limit):
  a new one past it evicts the connection that has waited longest for its request head, so a
  real client always gets in, and is refused itself only when every connection is busy with a
  request.
"""

from __future__ import annotations

import asyncio
import time

from uvicorn.protocols.http.h11_impl import H11Protocol


def guarded_protocol(header_timeout: float, max_connections: int) -> type[H11Protocol]:
    """An :class:`H11Protocol` class enforcing both bounds (uvicorn's ``http=``)."""

    class Guarded(H11Protocol):
        waiting_since = 0.0
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_head()
            if len(self.connections) > max_connections:
                self._evict()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            super().connection_lost(exc)

        def _await_head(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.waiting_since = time.monotonic()
            self.head_timer = self.loop.call_later(header_timeout, self._head_deadline)

        def _waiting(self) -> bool:
            idle = self.cycle is None or self.cycle.response_complete  # no request in flight
            return idle and not self.transport.is_closing()

        def _head_deadline(self) -> None:
            if self._waiting():
                self.transport.close()

        def _evict(self) -> None:
            waiting = [
                c
                for c in self.connections
                if isinstance(c, Guarded) and c is not self and c._waiting()
            ]
            if waiting:
                min(waiting, key=lambda c: c.waiting_since).transport.close()
            else:  # every other connection is busy with a request: refuse the newcomer
                self.transport.close()

    return Guarded
