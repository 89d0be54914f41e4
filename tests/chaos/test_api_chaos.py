"""A real ``swarmq api`` server against hostile bodies: a 1 GiB chunked upload without
credentials, and an oversized chunked upload with them. Credentials are checked before the
body is read and the size limit counts the bytes actually received."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from swarmq.api.guard import TOKEN_FILE, load_or_create_token
from tests.coord.redis_server import free_port
from tests.support import REPO, write_roster

GIB = 1 << 30
CHUNK = 1 << 20


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Server:
    def __init__(self, roster: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        code = "import sys; from swarmq.cli import main; sys.argv[0] = 'swarmq'; main()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, "-c", str(roster), "api", "--port", str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=REPO,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert self.proc.poll() is None and time.monotonic() < deadline, self.lines
                time.sleep(0.1)

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


def chunked_upload(port: int, total: int, token: str | None) -> tuple[bytes, int]:
    """Stream ``total`` bytes chunked until the server answers; (response head, bytes sent)."""
    sock = socket.create_connection(("127.0.0.1", port))
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(
        (
            "POST /api/swarm-memory HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"{auth}Transfer-Encoding: chunked\r\n\r\n"
        ).encode()
    )
    piece = f"{CHUNK:x}\r\n".encode() + b"a" * CHUNK + b"\r\n"
    sent, response = 0, b""
    try:
        while sent < total:
            if select.select([sock], [], [], 0)[0]:
                break
            sock.sendall(piece)
            sent += CHUNK
        sock.settimeout(30)
        response = sock.recv(4096)
    except (BrokenPipeError, ConnectionResetError):
        sock.settimeout(5)
        with contextlib.suppress(OSError):
            response = sock.recv(4096)
    finally:
        sock.close()
    return response, sent


@pytest.fixture
def server(tmp_path: Path, swarm_name: str, redis_url: str) -> Iterator[tuple[Server, Path]]:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    env = {k: v for k, v in os.environ.items() if k != "SWARMQ_API_TOKEN"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    running = Server(roster, env)
    yield running, tmp_path / "runtime"
    running.stop()


def test_hostile_bodies_never_reach_memory(
    server: tuple[Server, Path], redis_client: redis.Redis
) -> None:
    srv, runtime = server
    token_file = runtime / TOKEN_FILE
    token = token_file.read_text().strip()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert any(token in line for line in srv.lines)  # printed once, at creation
    assert load_or_create_token(runtime) == (token, False)  # never regenerated

    peak = [rss_kib(srv.proc.pid)]
    before = peak[0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(srv.proc.pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        anonymous, sent_anon = chunked_upload(srv.port, GIB, None)
        oversized, sent_auth = chunked_upload(srv.port, 64 * CHUNK, token)
    finally:
        done.set()
        sampler.join()
    assert anonymous.startswith(b"HTTP/1.1 401"), anonymous[:200]
    assert oversized.startswith(b"HTTP/1.1 413"), oversized[:200]
    assert sent_anon < 64 * CHUNK and sent_auth < 64 * CHUNK  # cut off early, not read whole
    assert (peak[0] - before) < 50 * 1024, (before, peak[0])  # growth under 50 MB


def test_a_write_while_redis_is_gone_is_refused_with_503_naming_the_url(
    tmp_path: Path, swarm_name: str
) -> None:
    from fastapi.testclient import TestClient

    from swarmq.api.app import create_app
    from swarmq.roster.loader import load_roster

    url = f"redis://127.0.0.1:{free_port()}/0"
    roster = load_roster(write_roster(tmp_path, swarm_name, url), env={})
    with TestClient(create_app(roster, token=None)) as http:
        response = http.post(
            "/api/swarm-memory",
            json={
                "workerId": "w1",
                "kind": "mission",
                "missionId": "m1",
                "eventType": "note",
                "content": "hello",
            },
        )
    assert response.status_code == 503 and url in response.json()["error"], response.text
    profiles = tmp_path / "profiles"
    assert (
        not [p for p in profiles.rglob("*") if p.is_file()] if profiles.exists() else True
    )  # nothing written
