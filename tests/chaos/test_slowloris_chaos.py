"""1,100 slow-header connections locked every client out of ``swarmq api`` for 40 s under a
1,024-descriptor limit (issue 31 item 8f). Here: 300 under a 256 limit (the same ratio, less
work). With a request-head deadline and a connection cap under the limit, a real client is
answered at once, and the slow connections are closed after ``api.header_timeout_seconds``."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.coord.redis_server import free_port
from tests.support import write_roster

SLOW = 300
LIMIT = 256


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def _health(url: str, timeout: float) -> int | None:
    try:
        return httpx.get(f"{url}/api/health", timeout=timeout).status_code
    except httpx.HTTPError:
        return None


@pytest.fixture
def server(tmp_path: Path, swarm_name: str, redis_url: str) -> str:
    port = free_port()
    roster = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        api={"port": port, "header_timeout_seconds": 2, "max_connections": 64},
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "swarmq.cli", "--config", str(roster), "api", "--no-auth"],
        preexec_fn=_limit,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while _health(url, 1) != 200:
            assert proc.poll() is None and time.monotonic() < deadline, "swarmq api did not start"
            time.sleep(0.1)
        yield url
    finally:  # a server that started too late is stopped too
        proc.terminate()
        proc.wait(10)


def test_slow_header_clients_never_lock_a_real_client_out(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    slow = []
    try:
        for _ in range(SLOW):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
            slow.append(sock)
        started = time.monotonic()
        assert _health(server, 5) == 200  # answered while 300 connections dawdle
        assert time.monotonic() - started < 5
        # the dawdlers are cut off by the deadline (2 s) or were evicted by newer ones
        deadline = time.monotonic() + 10
        for sock in slow[-32:]:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            assert sock.recv(1024) == b""
    finally:
        for sock in slow:
            sock.close()
    assert _health(server, 5) == 200
