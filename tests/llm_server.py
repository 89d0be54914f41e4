"""A real HTTP server speaking the OpenAI chat-completions protocol, with scriptable behaviour.

It listens on 127.0.0.1 (a random port) in a thread of the test process, so Celery worker
subprocesses reach it over TCP like any provider. Tests queue behaviours (``ok``, ``status`` for
429/5xx with ``Retry-After``, ``slow``, ``malformed``, ``hang`` past the client's timeout,
``drop`` the connection, ``wait`` for an event); when the queue is empty the ``reply`` function
answers. Every request is recorded.

Tests get one from a fixture built on :func:`running_llm_server` (``tests/llm/conftest.py``
defines ``llm_server``).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ReplyFn = Callable[[dict[str, Any]], str]


@dataclass
class Behaviour:
    kind: str
    content: str | None = None
    status: int = 200
    retry_after: str | None = None
    delay: float = 0.0
    body: bytes | None = None
    event: threading.Event | None = None
    tokens: tuple[int, int] = (11, 7)


def ok(content: str | None = None, tokens: tuple[int, int] = (11, 7)) -> Behaviour:
    return Behaviour("ok", content=content, tokens=tokens)


def status(
    code: int, retry_after: str | None = None, body: bytes = b'{"error":{"message":"nope"}}'
) -> Behaviour:
    return Behaviour("status", status=code, retry_after=retry_after, body=body)


def slow(seconds: float, content: str | None = None) -> Behaviour:
    return Behaviour("ok", content=content, delay=seconds)


def malformed(body: bytes = b"<html>this is not json</html>") -> Behaviour:
    return Behaviour("raw", body=body)


def hang(seconds: float) -> Behaviour:
    """Accept the request and answer only after ``seconds`` (longer than the client waits)."""
    return Behaviour("ok", delay=seconds, content="too late")


def drop() -> Behaviour:
    """Close the connection without any response."""
    return Behaviour("drop")


def wait(event: threading.Event, content: str | None = None) -> Behaviour:
    """Answer only once ``event`` is set (the test does something while the call is in flight)."""
    return Behaviour("ok", content=content, event=event)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    at: float

    @property
    def prompt(self) -> str:
        messages = (self.body or {}).get("messages") or []
        return "\n".join(str(m.get("content", "")) for m in messages)


@dataclass
class FakeLLMServer:
    reply: ReplyFn = field(default=lambda body: "ok")
    model: str = "fake-model"
    requests: list[RecordedRequest] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    """Set whenever a request arrives (tests clear it to wait for the next one)."""

    def __post_init__(self) -> None:
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control -----------------------------------------------------------------------------

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = (
                True  # headers and body are two writes: no 40 ms delayed-ACK stall
            )

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        httpd = self._httpd
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.02), name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    # -- serving -----------------------------------------------------------------------------

    def _next(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else Behaviour("ok")

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(
                RecordedRequest(handler.path, dict(handler.headers.items()), body, time.time())
            )
        self.arrived.set()
        if handler.path.rstrip("/") != "/v1/chat/completions":
            self._send(handler, 404, b'{"error":"not found"}')
            return
        behaviour = self._next()
        if behaviour.event is not None:
            behaviour.event.wait(30)
        if behaviour.delay:
            time.sleep(behaviour.delay)
        if behaviour.kind == "drop":
            handler.close_connection = True
            handler.connection.close()
            return
        if behaviour.kind == "status":
            headers = (
                {"Retry-After": behaviour.retry_after} if behaviour.retry_after is not None else {}
            )
            self._send(handler, behaviour.status, behaviour.body or b"{}", headers)
            return
        if behaviour.kind == "raw":
            self._send(handler, 200, behaviour.body or b"", content_type="text/html")
            return
        content = behaviour.content if behaviour.content is not None else self.reply(body or {})
        reply = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (body or {}).get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": behaviour.tokens[0],
                "completion_tokens": behaviour.tokens[1],
                "total_tokens": sum(behaviour.tokens),
            },
        }
        self._send(handler, 200, json.dumps(reply).encode())

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        code: int,
        payload: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass


@contextlib.contextmanager
def running_llm_server(reply: ReplyFn | None = None) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer(reply=reply) if reply is not None else FakeLLMServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
