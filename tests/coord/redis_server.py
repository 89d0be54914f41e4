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
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = directory
        self.durable = durable
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
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
        while time.monotonic() < deadline:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=0.2).ping()
                return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"test Redis on port {self.port} did not start")

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
