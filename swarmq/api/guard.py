"""The API's front door: who is asking is checked before a byte of the body is read, and the
body's size is enforced on the bytes actually received (chunked uploads included).

FastAPI reads and parses a request body before it runs dependencies, so a bearer check written
as a dependency lets anyone make the server buffer a body first. This ASGI layer runs before
routing: a request without valid credentials is answered 401 without reading its body, a
``Content-Length`` over the limit is answered 413 at once, and a body that grows past the limit
while streaming is cut off with 413 as soon as it does.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PATHS = frozenset(
    {"/api/health", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"}
)
"""Answered without credentials (no data behind them)."""

TOKEN_FILE = "api-token"
"""Under the runtime directory: the generated bearer token, owner-only (0600)."""


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


async def _answer(
    send: Send, status: int, message: str, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    body = json.dumps({"ok": False, "error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: bearer token (when one is set) before the body, then a byte budget."""

    def __init__(self, app: ASGIApp, *, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body = max_body_bytes

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None or scope["path"] in PUBLIC_PATHS:
            return True
        header = _header(scope, b"authorization") or b""
        scheme, _, credentials = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            await _answer(
                send, 401, "missing or wrong bearer token", ((b"www-authenticate", b"Bearer"),)
            )
            return
        length = _header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _answer(send, 413, f"request body larger than {self.max_body} bytes")
            return
        received = 0
        limit = self.max_body

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, f"request body larger than {limit} bytes")
            return message

        await self.app(scope, counted, send)


def load_or_create_token(runtime_dir: Path) -> tuple[str, bool]:
    """The API token stored under ``runtime_dir``, created (0600) when missing.

    Returns ``(token, created)``: a new token is printed once by the caller, never again.
    """
    path = Path(runtime_dir) / TOKEN_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = ""
    if text:
        if path.stat().st_mode & 0o077:
            raise PermissionError(
                f"{path}: the API token file must be readable by its owner only (chmod 600)"
            )
        return text, False
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server created it meanwhile
        return load_or_create_token(runtime_dir)
    try:
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    return token, True
