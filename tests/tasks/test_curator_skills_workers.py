"""curator.enrich and skills.improve in real Celery workers against a real chat-completions
server: cluster-wide quota contention, and a concurrent write during a slow call."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from swarmq.coord.cluster import Cluster
from swarmq.llm.ledger import LLMLedger
from swarmq.roster.loader import load_roster
from swarmq.skills.improver import SECTIONS
from swarmq.wiring.knowledge import knowledge_store
from tests.curation.conftest import enrichment_reply
from tests.llm_server import FakeLLMServer, running_llm_server, wait
from tests.skills.factory import entry, lines, write_store
from tests.support import WorkerProcess, write_roster

PROPOSAL = "\n\n".join(f"## {title}\n\n- noted" for title in SECTIONS)


def reply(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if system.startswith("You are skill_improver"):
        time.sleep(0.15)  # long enough for the three workers to overlap
        return PROPOSAL
    return enrichment_reply(body)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server(reply) as server:
        yield server


@pytest.fixture
def roster_file(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
    llm_server: FakeLLMServer,
) -> Path:
    workers = [
        {"id": f"w{n}", "role": "curator", "queues": ["curator", "skills"]} for n in (1, 2, 3)
    ]
    path = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=workers,
        llm={
            "provider": "openai",
            "base_url": llm_server.base_url,
            "model": "fake-model",
            "api_key_env": None,
            "timeout_seconds": 10,
            "max_retries": 0,
        },
        skill_improver={"enabled": True},
    )
    write_store(
        tmp_path / "project",
        [
            entry("p1", "Always run the database migration check before merging a schema change."),
            entry("p2", "Never commit generated lockfiles without running the install step first."),
        ],
    )
    return path


def start_in_parallel(start: Callable[..., WorkerProcess], *ids: str) -> list[WorkerProcess]:
    started: dict[str, WorkerProcess] = {}
    errors: list[BaseException] = []

    def one(worker_id: str) -> None:
        try:
            started[worker_id] = start(worker_id)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    if errors:
        raise errors[0]
    return [started[i] for i in ids]


def results(tasks: list[Any], timeout: float = 60) -> list[dict[str, Any]]:
    return [task.get(timeout=timeout) for task in tasks]


def test_three_workers_compete_for_ten_skill_improver_slots(
    start_worker: Callable[..., WorkerProcess],
    celery_client: Celery,
    roster_file: Path,
    llm_server: FakeLLMServer,
) -> None:
    workers = start_in_parallel(start_worker, "w1", "w2", "w3")
    tasks = [
        celery_client.send_task("skills.improve", kwargs={"approved": True}) for _ in range(16)
    ]
    done = results(tasks)
    ran = [r for r in done if r["ran"]]
    refused = [r for r in done if not r["ran"]]
    assert llm_server.count() == 10
    assert len(ran) == 10 and all(r["source"] == "llm" for r in ran)
    assert len(refused) == 6 and all(r["reason"].startswith("quota_exhausted") for r in refused)
    assert done[-1]["quota"]["max"] == 10
    roster = load_roster(roster_file, env={})
    status = Cluster.connect(roster.cluster_config()).gate.status("skill_improver")
    assert (status.used, status.held) == (10, 0)
    proposals = sorted(
        (roster.workspace_dir / ".swarm" / "skill-improver" / "proposals").glob("*.md")
    )
    assert len(proposals) == 10 and len({r["proposal"] for r in ran}) == 10
    ledger = list(LLMLedger.in_runtime(roster.runtime_dir).records())
    assert sorted(r["outcome"] for r in ledger) == ["ok"] * 10 + ["quota_exhausted"] * 6
    assert {r["task_id"] for r in ledger} == {t.id for t in tasks}
    mirror_path = roster.swarm_dir / "skill-improver-quota.json"
    deadline = time.monotonic() + 10  # the workers write the mirror behind the count
    while time.monotonic() < deadline and not (
        mirror_path.exists() and '"calls_used": 10' in mirror_path.read_text()
    ):
        time.sleep(0.1)
    mirror = json.loads(mirror_path.read_text())
    assert mirror["calls_used"] == 10 and mirror["max_calls"] == 10
    busy = [w for w in workers if "skills.improve" in w.log() and "succeeded" in w.log()]
    assert len(busy) >= 2, "the slots were not contended by several workers"
    for worker in workers:  # warm shutdowns in parallel rather than one after another at teardown
        assert worker.proc is not None
        worker.proc.send_signal(signal.SIGTERM)


def test_enrich_in_a_worker_keeps_a_write_made_during_the_slow_call(
    start_worker: Callable[..., WorkerProcess],
    celery_client: Celery,
    roster_file: Path,
    llm_server: FakeLLMServer,
) -> None:
    start_worker("w1")
    release = threading.Event()
    llm_server.script(wait(release))
    task = celery_client.send_task("curator.enrich")
    assert llm_server.arrived.wait(30)
    roster = load_roster(roster_file, env={})
    knowledge = knowledge_store(
        roster, Cluster.connect(roster.cluster_config()).locks
    )  # Redis locks, like the worker
    knowledge.swarm.update("p1", {"tags": ["database", "migration"]})
    release.set()
    report = task.get(timeout=30)
    assert sorted(report["enriched"]) == ["p1", "p2"] and report["merged_after_conflict"] == ["p1"]
    assert report["sources"] == ["llm"] and report["quota"]["used"] == 1
    stored = {e["id"]: e for e in lines(roster.swarm_dir / "knowledge.jsonl")}
    assert stored["p1"]["tags"] == ["database", "migration"] and stored["p1"]["triggers"] == [
        "about p1"
    ]
    assert stored["p1"]["enrichment_source"] == "llm"
    again = celery_client.send_task("curator.enrich").get(timeout=30)
    assert again["candidates"] == 0 and again["calls"] == 0 and llm_server.count() == 1
