"""The whole flywheel through a real Celery worker: transcript → pending → pool → promoted
learning (and swarm-tier knowledge entry) → cited by a lookup → matured; LLM extraction spends
the ``forge`` quota and stops when it is used up."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from swarmq.coord.cluster import Cluster
from swarmq.flywheel.lookup import lookup
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.store import AgentsLayout
from swarmq.roster.loader import load_roster
from swarmq.wiring.knowledge import knowledge_store
from tests.llm_server import FakeLLMServer, running_llm_server
from tests.support import WorkerProcess, write_roster

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
LLM_REPLY = json.dumps(
    [
        {
            "type": "decision",
            "content": "Run exactly one celery beat per swarm, guarded by a "
            "Redis lock, because two beats enqueue every periodic job twice.",
            "confidence": 0.9,
            "class": "architecture",
            "evidence": "run celery beat as a single instance guarded by a Redis lock",
        }
    ]
)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server(lambda body: LLM_REPLY) as server:
        yield server


@pytest.fixture
def roster_file(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
    llm_server: FakeLLMServer,
) -> Path:
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=[{"id": "w1", "role": "librarian", "queues": ["forge"]}],
        llm={
            "provider": "openai",
            "base_url": llm_server.base_url,
            "model": "fake-model",
            "api_key_env": None,
            "timeout_seconds": 10,
            "max_retries": 0,
        },
        quotas={"forge": {"max_calls_per_day": 1}},
        forge={
            "llm": {"enabled": True},
            "narration_needs_witness": False,
            "narration_needs_limit": False,
        },  # no failed call
        flywheel={"promotion_age_hours": 0},
    )


def call(app: Celery, name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    result: dict[str, Any] = app.send_task(name, args=args, kwargs=kwargs).get(timeout=60)
    return result


def test_whole_loop_through_a_worker(
    roster_file: Path,
    start_worker: Callable[..., WorkerProcess],
    celery_client: Celery,
    llm_server: FakeLLMServer,
    tmp_path: Path,
) -> None:
    roster = load_roster(roster_file, env={})
    layout = AgentsLayout(roster.agents_dir)
    roster.swarm_dir.mkdir(
        parents=True
    )  # the project has a knowledge store: promotions go there too
    transcript = tmp_path / "transcripts" / "session.jsonl"
    transcript.parent.mkdir()
    shutil.copy(FIXTURES / "claude-code" / "session-v2.0.jsonl", transcript)
    start_worker("w1")

    forged = call(celery_client, "forge.extract", str(transcript), key="mission-7")
    assert (
        forged["status"] == "forged" and forged["new"] == 7
    )  # 6 by the classifier (its 3 most confident narrated lessons of 4) + 1 from the LLM
    assert forged["llm"]["status"] == "ok" and llm_server.count() == 1
    assert (
        call(celery_client, "forge.extract", str(transcript), key="mission-7")["status"]
        == "unchanged"
    )

    # the quota is spent: a second transcript is forged deterministically, no request is sent
    other = tmp_path / "transcripts" / "codex.jsonl"
    shutil.copy(next((FIXTURES / "codex").glob("rollout-2026-*.jsonl")), other)
    second = call(celery_client, "forge.extract", str(other))
    assert (
        second["new"] == 2
        and second["llm"]["status"] == "quota_exhausted"
        and llm_server.count() == 1
    )

    first = call(celery_client, "forge.close_loop")
    assert first["ingest"]["added"] == 9 and first["promoted"] == []
    assert first["held"] == {"citations": 9 - first["rejected_discard"]}

    cluster = Cluster.connect(roster.cluster_config())
    try:
        hits = lookup(
            layout,
            cluster.locks,
            "visibility timeout redelivered",
            session_id="later-session",
            limit=1,
            citation_type="reference",  # a use: looking alone promotes nothing (issue 24)
        )
        assert hits[0].kind == "candidate"
        promoted = call(celery_client, "forge.close_loop")
        assert [p["candidate_id"] for p in promoted["promoted"]] == [hits[0].id]
        artifact = Path(promoted["promoted"][0]["artifact_path"])
        assert artifact.exists() and Pool(layout).get(hits[0].id) is None
        assert promoted["knowledge"][0]["outcome"] in ("added", "reinforced")
        entries = knowledge_store(roster, cluster.locks).swarm.list()
        assert any(str(artifact) in (e.to_dict().get("source_refs") or []) for e in entries)

        for session in ("s1", "s2", "s3"):
            lookup(
                layout,
                cluster.locks,
                "visibility timeout redelivered",
                session_id=session,
                limit=1,
                include_pool=False,
                citation_type="helpful",
            )
        matured = call(celery_client, "forge.close_loop")
    finally:
        cluster.close()
    assert matured["feedback"]["rewards"] == 3
    assert [(t["from"], t["to"]) for t in matured["maturity"]["transitions"]] == [
        ("provisional", "candidate")
    ]
    assert "maturity: candidate" in artifact.read_text()
    assert matured["metrics"]["sigma"] > 0 and matured["metrics"]["rho"] > 0
