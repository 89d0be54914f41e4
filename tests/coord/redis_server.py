"""A throwaway Redis server on a free port, for tests that stop Redis on purpose."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis

from swarmq.workers.embedded_redis import server_binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """``durable``: every write in the AOF before it is answered, so a SIGKILL loses nothing
    (what ``swarmq``'s embedded Redis and the docs ask of a production Redis)."""

    def __init__(self, directory: Path, *, port: int | None = None, durable: bool = False) -> None:
        self.chosen_port = port is not None
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = directory
        self.durable = durable
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        """Start (or restart) the server; returns once it answers.

        A free port can be taken between :func:`free_port` and the server's bind (tests run in
        parallel): the server then exits, and a PING at that port would reach someone else's
        Redis. So the answer counts only from a server whose ``dir`` is ours, and a first start
        that lost its port takes another one."""
        for _ in range(5):
            if self._start_once():
                return self
            if self.chosen_port or self.proc is None or self.proc.poll() is None:
                break
            self.port = free_port()
            self.url = f"redis://127.0.0.1:{self.port}/0"
        raise RuntimeError(f"test Redis on port {self.port} did not start")

    def _start_once(self) -> bool:
        self.proc = subprocess.Popen(
            [
                str(server_binary()),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                *(
                    ["--appendonly", "yes", "--appendfsync", "always"]
                    if self.durable
                    else ["--appendonly", "no"]
                ),
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                client = redis.Redis.from_url(self.url, socket_connect_timeout=0.2)
                with client:
                    served = client.config_get("dir").get("dir")
                if self.proc.poll() is None and Path(str(served)) == self.directory.resolve():
                    return True
            except redis.ConnectionError:
                pass
            time.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        return False

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM kill would end it."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
