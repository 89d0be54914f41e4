"""A TCP proxy in front of a real Redis that loses one answer on demand.

The armed command reaches Redis and runs there; its client's connection is then closed before
the answer gets back. That is what a Redis SIGKILLed between its AOF fsync and its reply does to
its clients (the broker chaos test's double start): the command's effect is durable, the caller
never heard it, and asks again on a new connection.
"""

from __future__ import annotations

import select
import socket
import threading
from types import TracebackType


class ReplyLoss:
    """Forwards every connection to ``upstream``; :meth:`arm` picks the command to cut off."""

    def __init__(self, upstream: tuple[str, int] = ("127.0.0.1", 6379)) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._needles: tuple[bytes, ...] | None = None
        self._times = 0
        self.lost: list[bytes] = []
        """The commands whose answers were lost (their bytes as the client sent them)."""
        self._closed = False

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def arm(self, *needles: bytes, times: int = 1) -> None:
        """The next ``times`` commands whose bytes hold every one of ``needles`` run, unanswered."""
        with self._lock:
            self._needles = needles
            self._times = times

    def start(self) -> ReplyLoss:
        threading.Thread(target=self._accept, name="reply-loss", daemon=True).start()
        return self

    def stop(self) -> None:
        self._closed = True
        self._listener.close()

    def __enter__(self) -> ReplyLoss:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _take(self, data: bytes) -> bool:
        with self._lock:
            needles = self._needles
            if needles is None or not all(n in data for n in needles):
                return False
            self._times -= 1
            if self._times <= 0:
                self._needles = None
            self.lost.append(data)
            return True

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        try:
            while True:
                readable, _, _ = select.select([client, server], [], [])
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is client and self._take(data):
                        server.sendall(data)
                        server.settimeout(10)
                        server.recv(65536)  # it ran: its answer is here, and goes nowhere
                        return
                    (server if sock is client else client).sendall(data)
        except OSError:
            return
        finally:
            client.close()
            server.close()
