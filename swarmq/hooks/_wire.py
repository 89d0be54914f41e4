"""Where a swarm's hook server listens and how a hook talks to it: one JSON line each way over a
Unix socket in the swarm's state directory. Standard library only (the hook path imports it),
and the least of it: ``_socket``, the socket type itself, rather than ``socket``, whose import
builds four enums and loads ``selectors`` (2-3 ms of every fresh hook or command), no
``typing``, no ``json`` (:mod:`swarmq.hooks._leanjson`), no ``pathlib`` and no ``contextlib``
(paths as strings, as :mod:`swarmq.storage.statedir` spells them)."""

from __future__ import annotations

import _socket
import os
import time

from swarmq.hooks._leanjson import dumps, loads
from swarmq.storage.sha import sha256_hex
from swarmq.storage.statedir import child, pure

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MAX_SOCKET_PATH = 100
"""AF_UNIX paths are limited to 107 bytes on Linux (103 on macOS); longer ones go to /tmp."""
MAX_REPLY = 4 << 20
LOG_BYTES = 1 << 20


def socket_file(state: Path | str) -> str:
    """Where the server of the state directory ``state`` listens (:func:`socket_path`)."""
    state = pure(os.fspath(state))
    path = child(state, "server.sock")
    if len(path) <= MAX_SOCKET_PATH:
        return path
    digest = sha256_hex(state.encode("utf-8"))[:16]
    return child(
        pure(os.environ.get("TMPDIR") or "/tmp"), f"swarmq-hooks-{os.getuid()}-{digest}.sock"
    )


def socket_path(state: Path | str) -> Path:
    from pathlib import Path

    return Path(socket_file(state))


def request(state: Path | str, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Send ``message`` to the swarm's hook server and return its answer; None when no server
    answers (none running, a stale socket, or no answer within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    try:
        conn = unix_socket()
        try:
            conn.settimeout(timeout)
            conn.connect(socket_file(state))
            conn.sendall(dumps(message).encode("utf-8") + b"\n")
            answer = read_line(conn, deadline, MAX_REPLY, 65536)
        finally:
            conn.close()
    except OSError:  # no socket, refused, timed out
        return None
    return decode(answer)


def unix_socket() -> _socket.socket:
    """A new Unix stream socket (``socket.socket``'s own base type: the caller closes it)."""
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


def read_line(conn: _socket.socket, deadline: float, limit: int, chunk_size: int) -> bytes:
    """The peer's one-line answer, read until its newline, its close or ``limit`` bytes, each
    read bounded by what is left of ``deadline`` (``time.monotonic``); raises ``OSError`` (a
    timeout included) as the socket does."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = conn.recv(chunk_size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return b"".join(chunks)


def decode(answer: bytes) -> dict[str, Any] | None:
    """A JSON object answer; None for anything else (cut short, damaged, not an object)."""
    try:
        value = loads(answer)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def log(state: Path | str, text: str) -> bool:
    """Append one line to the swarm's hook log (rotated once past :data:`LOG_BYTES`); never
    raises (a hook must not fail because its log cannot be written), says whether it wrote."""
    try:
        directory = pure(os.fspath(state))
        os.makedirs(directory, exist_ok=True)
        path = child(directory, "hooks.log")
        try:
            if os.stat(path).st_size > LOG_BYTES:
                os.replace(path, child(directory, "hooks.log.1"))
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} pid={os.getpid()} {text}\n")
        return True
    except OSError:
        return False
