"""Fixtures: a real Redis (a dedicated database and a per-test key prefix) and real workers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from swarmq.coord import keys
from swarmq.coord.connection import answers
from swarmq.workers import embedded_redis
from tests.support import WorkerProcess, client_app, write_roster

TEST_REDIS_URL = os.environ.get("SWARMQ_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test Redis: the one answering at ``TEST_REDIS_URL``, else swarmq's embedded server
    started there for this session (so the suite needs no Redis installed) and stopped after."""
    if answers(TEST_REDIS_URL, timeout=2.0):
        yield TEST_REDIS_URL
        return
    runtime = tmp_path_factory.mktemp("embedded-redis")
    try:
        embedded_redis.start(TEST_REDIS_URL, runtime)
    except embedded_redis.EmbeddedRedisError as exc:  # pragma: no cover - environment problem
        pytest.fail(f"no Redis answers at {TEST_REDIS_URL} and none could be started: {exc}")
    try:
        yield TEST_REDIS_URL
    finally:
        embedded_redis.stop(runtime)


@pytest.fixture
def swarm_name() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def redis_client(redis_url: str, swarm_name: str) -> Iterator[redis.Redis]:
    """A client on the test database; every key of this test's swarm is deleted afterwards."""
    client = redis.Redis.from_url(redis_url)
    yield client
    batch = list(client.scan_iter(match=f"{keys.prefix(swarm_name)}*", count=1000))
    if batch:
        client.delete(*batch)
    client.close()


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(tmp_path, swarm_name, redis_url)


@pytest.fixture
def celery_client(roster_file: Path) -> Iterator[Celery]:
    app = client_app(roster_file)
    yield app
    app.close()


@pytest.fixture
def start_worker(
    roster_file: Path, celery_client: Celery
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start real worker subprocesses for roster entries; all are stopped at teardown."""
    started: list[WorkerProcess] = []

    def start(worker_id: str = "w1", **options: Any) -> WorkerProcess:
        proc = WorkerProcess(roster_file, worker_id, **options)
        started.append(proc)
        return proc.start(celery_client)

    yield start
    for proc in started:
        proc.stop()
