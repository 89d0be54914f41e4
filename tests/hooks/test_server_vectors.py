"""The hook server embeds entry vectors off the request path: a prompt over a store whose
entries have no vector yet is answered at once (with the default model, MiniLM, the query
embeds none of a backlog and ranks those entries by their words); the server's filler thread then
embeds the rest, after which a task that shares no word with its lesson reaches it. Real
roster, real Redis locks, the packaged model."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
import redis

from swarmq.hooks.server import HookService
from swarmq.knowledge._dense import INLINE_ENTRIES
from swarmq.knowledge.config import DenseModel
from swarmq.knowledge.vectors import missing
from swarmq.similarity.embedding import Vectors
from swarmq.similarity.packaged import packaged_embedder
from tests.support import write_roster

LESSON = (
    "Set websockets.serve(max_size=...) so a client cannot send a frame larger than the server "
    "can hold in memory."
)
FILLER = [
    f"Run the migration script number {n} for table t{n} before deploying service s{n}."
    for n in range(3 * INLINE_ENTRIES)
]


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(tmp_path, swarm_name, redis_url)


def test_the_server_fills_vectors_between_requests(
    roster_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = HookService(roster_file)
    assert service.knowledge.config.model == DenseModel.MINILM  # the default here
    for lesson in [*FILLER, LESSON]:
        service.knowledge.add_lesson(lesson, category="process")
    model = packaged_embedder("minilm")
    embed = model.embed
    texts: list[str] = []

    def counted(batch: Sequence[str]) -> Vectors:
        texts.extend(batch)
        return embed(batch)

    monkeypatch.setattr(model, "embed", counted)
    service = HookService(roster_file)  # a fresh server over the grown store
    answered = service.answer({"op": "prompt", "text": "deploy service s3", "session_id": "a"})
    assert answered["context"], "entries without a vector are ranked by their words"
    # the injection was recorded (a rewrite the vectors have not caught up with: None) or
    # entries wait for their vector: either way not every entry was embedded on the request
    assert missing(service.knowledge)["swarm"] != 0, "the prompt embedded the backlog"
    entries = [t for t in texts if t.startswith(("Run the migration", "Set websockets"))]
    assert entries == [], "a backlog is never embedded on a request's path"

    filler = threading.Thread(target=service.fill_forever, daemon=True)
    filler.start()
    try:
        deadline = time.monotonic() + 120
        while missing(service.knowledge)["swarm"] != 0 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        service.stop.set()
        filler.join(10)
    assert missing(service.knowledge)["swarm"] == 0
    task = "cap the bytes a peer may push through one socket message"
    found = service.answer({"op": "prompt", "text": task, "session_id": "b"})
    assert found["context"] and "websockets" in found["context"]
