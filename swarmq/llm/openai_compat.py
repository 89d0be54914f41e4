"""An OpenAI-compatible ``POST {base_url}/chat/completions`` client over httpx.

Works with OpenAI, OpenRouter, vLLM, llama.cpp's server, Ollama's ``/v1`` and any other server
speaking the protocol. The API key comes from the environment variable swarm.yaml names, never
from the file. Classification of failures (see :mod:`swarmq.llm.errors`) is the whole job:
retries, quota and the ledger live in :mod:`swarmq.llm.metered`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import SplitResult, urlsplit

import httpx

from swarmq.llm.errors import (
    ClientError,
    ConnectFailed,
    MalformedReply,
    RateLimited,
    RequestTimeout,
    ServerError,
)
from swarmq.llm.provider import ChatRequest, OnSend, ProviderReply

MAX_REPLY_BYTES = 4 * 1024 * 1024
"""A reply larger than this is refused as malformed rather than parsed."""


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; ``None`` when absent or junk."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = (moment - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def endpoint_client(
    base_url: str,
    *,
    api_key: str | None,
    timeout_seconds: float,
    transport: httpx.BaseTransport | None = None,
) -> tuple[SplitResult, httpx.Client]:
    """The parts of ``base_url`` (refused unless http(s)) and a JSON client for it, shared by
    the chat and embeddings endpoints. Redirects are not followed: one could carry the bearer
    key to another host."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"llm.base_url {base_url!r} is not an http(s) URL")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    client = httpx.Client(
        headers=headers,
        timeout=httpx.Timeout(timeout_seconds, connect=min(10.0, timeout_seconds)),
        transport=transport,
        follow_redirects=False,
    )
    return parts, client


class OpenAICompatible:
    """One endpoint and model; a pooled httpx client reused across calls."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_seconds: float = 120.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        parts, self._client = endpoint_client(
            base_url, api_key=api_key, timeout_seconds=timeout_seconds, transport=transport
        )
        self.base_url = base_url.rstrip("/")
        self._model = model
        self._rate_key = f"openai:{parts.netloc}"

    @property
    def model(self) -> str:
        return self._model

    @property
    def rate_key(self) -> str:
        return self._rate_key

    def body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self._model, "messages": list(request.messages)}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        body.update(request.extra)
        return body

    def send(self, request: ChatRequest, *, on_send: OnSend) -> ProviderReply:
        def trace(event: str, info: dict[str, Any]) -> None:
            if event.endswith("send_request_headers.started"):
                on_send()

        http_request = self._client.build_request(
            "POST",
            f"{self.base_url}/chat/completions",
            json=self.body(request),
            extensions={"trace": trace},
        )
        try:
            response = self._client.send(http_request)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise ConnectFailed(f"cannot reach {self.base_url}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise RequestTimeout(
                f"{self.base_url} did not answer in time ({type(exc).__name__})"
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise ServerError(f"{self.base_url} dropped the connection: {exc}") from exc
        return self._reply(response)

    def _reply(self, response: httpx.Response) -> ProviderReply:
        status = response.status_code
        if status == 429:
            raise RateLimited(
                f"rate limited by {self.base_url} (HTTP 429)",
                status_code=status,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        if status >= 500:
            raise ServerError(
                f"{self.base_url} answered HTTP {status}: {response.text[:200]!r}",
                status_code=status,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        if status >= 400:
            raise ClientError(
                f"{self.base_url} refused the request (HTTP {status}): {response.text[:200]!r}",
                status_code=status,
            )
        if status != 200:
            raise MalformedReply(
                f"unexpected HTTP {status} from {self.base_url}", status_code=status
            )
        if len(response.content) > MAX_REPLY_BYTES:
            raise MalformedReply(
                f"reply of {len(response.content)} bytes exceeds {MAX_REPLY_BYTES}",
                status_code=status,
            )
        try:
            data = json.loads(response.content)
        except (ValueError, UnicodeDecodeError) as exc:
            raise MalformedReply(
                f"reply is not JSON: {response.text[:120]!r}", status_code=status
            ) from exc
        return _parse_completion(data, self._model, status)

    def close(self) -> None:
        self._client.close()


def _parse_completion(data: Any, default_model: str, status: int) -> ProviderReply:
    """Pull ``choices[0].message.content`` and the token usage out of a reply body."""
    try:
        message = data["choices"][0]["message"]
        content = message["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise MalformedReply("reply has no choices[0].message.content", status_code=status) from exc
    if not isinstance(content, str):
        raise MalformedReply(
            f"choices[0].message.content is {type(content).__name__}, not a string",
            status_code=status,
        )
    usage = data.get("usage") if isinstance(data, dict) else None
    tokens_in = tokens_out = None
    if isinstance(usage, dict):
        tokens_in = _int_or_none(usage.get("prompt_tokens"))
        tokens_out = _int_or_none(usage.get("completion_tokens"))
    model = data.get("model") if isinstance(data.get("model"), str) else default_model
    return ProviderReply(content, model, tokens_in, tokens_out)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
