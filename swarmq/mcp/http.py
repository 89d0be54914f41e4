"""``swarmq mcp --http``: the MCP server over streamable HTTP, stateless, behind the API's bearer
token.

Stateless (``stateless_http``, JSON answers): no session lives in one process, so any replica
behind a balancer can answer any request. The token is checked before the SDK sees the request
(and so before any body is read); the SDK itself refuses a ``Host`` or ``Origin`` that is not
loopback when bound to loopback (DNS-rebinding protection).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.mcpserver import MCPServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PATH = "/mcp"


class BearerToken:
    """ASGI middleware: every HTTP request carries ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def authorized(self, scope: Scope) -> bool:
        header = b""
        for key, value in scope.get("headers", ()):
            if key.lower() == b"authorization":
                header = bytes(value)
        scheme, _, credentials = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.authorized(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"ok": False, "error": "missing or wrong bearer token"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer[Any], *, token: str | None, host: str) -> ASGIApp:
    """The stateless streamable-HTTP app at ``/mcp``, behind ``token`` unless it is ``None``."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, host=host
    )
    return BearerToken(app, token) if token is not None else app


def serve_http(server: MCPServer[Any], *, host: str, port: int, token: str | None) -> None:
    """Run the HTTP transport with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(
        http_app(server, token=token, host=host),
        host=host,
        port=port,
        log_level="warning",
        proxy_headers=False,
        lifespan="on",
    )
