"""An OpenAI-compatible ``POST {base_url}/embeddings`` client: a deployment's own embedding
model behind the same :class:`~swarmq.similarity.embedding.Embedder` interface as the packaged
one, configured by ``llm.embedding_model`` beside the endpoint and key the LLM jobs use.

Failures raise the LLM layer's classified errors (:mod:`swarmq.llm.errors`): a retrieval that
cannot embed its task says so instead of silently ranking on words alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import numpy as np

from swarmq.llm.config import LLMConfig
from swarmq.llm.errors import (
    ClientError,
    ConnectFailed,
    LLMConfigError,
    MalformedReply,
    ServerError,
)
from swarmq.llm.factory import api_key
from swarmq.llm.openai_compat import MAX_REPLY_BYTES, endpoint_client
from swarmq.similarity.embedding import Vectors, normalise_rows

BATCH = 256
"""Texts per request (servers cap the ``input`` list; 256 is under every common limit)."""


class OpenAIEmbedder:
    """One endpoint and embeddings model; vectors are L2-normalised here, whatever the server
    returns."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_seconds: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        parts, self._client = endpoint_client(
            base_url, api_key=api_key, timeout_seconds=timeout_seconds, transport=transport
        )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{parts.netloc}{parts.path.rstrip('/')}:{model}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The model's width, learnt from one probe request the first time it is needed."""
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(list(texts[i : i + BATCH])) for i in range(0, len(texts), BATCH)]
        out = normalise_rows(np.vstack(parts))
        self._dim = int(out.shape[1])
        return out

    def _request(self, texts: list[str]) -> Vectors:
        url = f"{self.base_url}/embeddings"
        # An empty string is refused by some servers; a space embeds to "nothing in particular".
        body = {"model": self.model, "input": [t if t.strip() else " " for t in texts]}
        try:
            response = self._client.post(url, json=body)
        except httpx.TransportError as exc:
            raise ConnectFailed(f"cannot reach {url}: {exc}") from exc
        if response.status_code >= 500:
            raise ServerError(
                f"{url} answered HTTP {response.status_code}", status_code=response.status_code
            )
        if response.status_code != 200:
            raise ClientError(
                f"{url} refused the request (HTTP {response.status_code}): {response.text[:200]!r}",
                status_code=response.status_code,
            )
        if len(response.content) > MAX_REPLY_BYTES * 16:
            raise MalformedReply(f"{url}: reply of {len(response.content)} bytes is too large")
        return _vectors(response.content, len(texts), url)

    def close(self) -> None:
        self._client.close()


def _vectors(content: bytes, count: int, url: str) -> Vectors:
    try:
        data: Any = json.loads(content)
        rows = sorted(data["data"], key=lambda item: int(item["index"]))
        matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedReply(f"{url}: not an embeddings reply ({exc})") from exc
    if matrix.ndim != 2 or len(matrix) != count or not np.all(np.isfinite(matrix)):
        raise MalformedReply(f"{url}: expected {count} finite vectors, got shape {matrix.shape}")
    return matrix


def build_embedder(
    config: LLMConfig, env: Mapping[str, str] | None = None
) -> OpenAIEmbedder | None:
    """The endpoint's embedder when ``llm.embedding_model`` is set, else ``None`` (the packaged
    local model is used)."""
    if not config.embedding_model:
        return None
    assert config.base_url is not None  # the config validator requires it
    key = api_key(config, os.environ if env is None else env)
    try:
        return OpenAIEmbedder(
            config.base_url,
            config.embedding_model,
            api_key=key,
            timeout_seconds=min(config.timeout_seconds, 60.0),
        )
    except ValueError as exc:
        raise LLMConfigError(str(exc)) from exc
