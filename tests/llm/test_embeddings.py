"""The OpenAI-compatible embeddings client against a real local HTTP server, and hybrid
retrieval running on it instead of the packaged model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.llm.config import LLMConfig
from swarmq.llm.embeddings import OpenAIEmbedder, build_embedder
from swarmq.llm.errors import LLMConfigError, MalformedReply
from swarmq.storage.locking import LocalLocks

TOPICS = ("websocket", "localstorage", "migration")


def vector(text: str) -> list[float]:
    """A toy model: one dimension per topic word, plus a constant so no vector is zero."""
    lower = text.lower()
    return [float(word in lower) * 3 for word in TOPICS] + [0.1]


class Handler(BaseHTTPRequestHandler):
    malformed = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path == "/v1/embeddings" and body["model"] == "toy-embed"
        if Handler.malformed:
            reply = b'{"data": "nope"}'
        else:
            data = [
                {"index": i, "embedding": vector(t), "object": "embedding"}
                for i, t in enumerate(body["input"])
            ]
            reply = json.dumps({"data": list(reversed(data)), "model": "toy-embed"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        Handler.malformed = False
        httpd.shutdown()
        httpd.server_close()


def test_vectors_come_back_in_input_order_and_normalised(server: str) -> None:
    embedder = OpenAIEmbedder(server, "toy-embed")
    vectors = embedder.embed(["a websocket", "run the migration", ""])
    assert vectors.shape == (3, 4) and embedder.dim == 4
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0][0] > 0.9 and vectors[1][2] > 0.9


def test_a_malformed_reply_is_an_error_naming_the_endpoint(server: str) -> None:
    Handler.malformed = True
    with pytest.raises(MalformedReply, match="/v1/embeddings"):
        OpenAIEmbedder(server, "toy-embed").embed(["x"])


def test_the_configured_endpoint_drives_hybrid_retrieval(server: str, tmp_path: Path) -> None:
    config = LLMConfig(base_url=server, embedding_model="toy-embed", api_key_env=None)
    embedder = build_embedder(config)
    assert embedder is not None and embedder.name.endswith(":toy-embed")
    knowledge = KnowledgeStore(
        tmp_path / "p" / ".swarm",
        locks=LocalLocks(tmp_path / "locks"),
        config=KnowledgeConfig(retrieval=Retrieval.HYBRID),  # stated, not the default's
        data_dir=tmp_path / "data",
        embedder=embedder,
    )
    knowledge.add_lesson("Set max_size when serving a websocket to bound client messages")
    knowledge.add_lesson("Wrap every localStorage access in try/catch for Safari private mode")
    found = search(knowledge, QueryContext(text="the WebSocket server drops big frames"))
    assert found and "max_size" in found[0].entry.lesson


def test_a_missing_key_is_a_config_error() -> None:
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", embedding_model="m", api_key_env="NOPE")
    with pytest.raises(LLMConfigError, match="NOPE"):
        build_embedder(config, env={})
