"""Fixtures: a real Redis (a dedicated database and a per-test key prefix) and real workers.

The suite runs in parallel (pytest-xdist, ``-n`` in pyproject's addopts). Each xdist worker gets a
database of its own, counted down from the one ``SWARMQ_TEST_REDIS_URL`` names (worker ``gw0`` the
base, ``gw1`` the one below, ...): Celery's broadcast mailboxes (pings, shutdowns) are Redis
channels named by database, so two workers of the same name in two tests running at once would
answer each other's pings in one database. A test that takes ``redis_url`` is isolated without
thinking about it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from celery import Celery

from swarmq.coord import keys
from swarmq.coord.connection import answers
from swarmq.workers import embedded_redis
from tests.knowledge.indexed import force_index_path, forced
from tests.support import WorkerProcess, client_app, write_roster

BASE_REDIS_URL = os.environ.get("SWARMQ_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

os.environ.setdefault(
    "SWARMQ_MODEL_CACHE", str(Path(tempfile.gettempdir()) / f"swarmq-test-models-{os.getuid()}")
)
"""One quantised MiniLM for the whole suite (swarmq.similarity.quantized), every xdist worker
and every command a test starts (they inherit the environment, a fresh ``XDG_CACHE_HOME`` or
not): built once under its file lock, not for a few seconds in each test's empty cache."""


@pytest.fixture(autouse=forced())
def _transactions_through_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SWARMQ_TEST_TXN_INDEX=1``: every store transaction reads through the persisted index
    (tests/knowledge/indexed.py)."""
    force_index_path(monkeypatch)


@pytest.fixture(autouse=True)
def _no_held_indexes_after_the_test() -> Iterator[None]:
    """A test that warmed a hook server (``HookService.warm``) turned on the holding of index
    connections for the whole process: turned off again, so no later test of this xdist
    worker reads through connections an earlier one left held."""
    yield
    held = sys.modules.get("swarmq.knowledge._heldindex")
    if held is not None and held.holding():
        held.hold(False)


def worker_redis_url(base: str, worker: str | None) -> str:
    """``base`` with the database of xdist worker ``worker`` (``gwN``: the base's database minus
    N); ``base`` itself outside xdist."""
    if not worker:
        return base
    index = int(worker.removeprefix("gw"))
    parts = urlsplit(base)
    path = parts.path.strip("/")
    db = int(path) if path else 0
    if db - index < 0:
        raise pytest.UsageError(
            f"SWARMQ_TEST_REDIS_URL={base}: database {db} leaves none for xdist worker {worker} "
            f"(worker gwN uses database {db} - N); name a database of at least {index} or run "
            "fewer workers (-n)"
        )
    return urlunsplit(parts._replace(path=f"/{db - index}"))


TEST_REDIS_URL = worker_redis_url(BASE_REDIS_URL, os.environ.get("PYTEST_XDIST_WORKER"))

_EMBEDDED = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """No Redis answering at the test address: the controlling process (not each xdist worker,
    which would race for one port) starts swarmq's embedded server there for the whole run, so
    the suite needs no Redis installed; :func:`pytest_unconfigure` stops it."""
    if hasattr(config, "workerinput"):
        return
    _build_the_quantised_model()
    if answers(BASE_REDIS_URL, timeout=2.0):
        return
    runtime = Path(tempfile.mkdtemp(prefix="swarmq-test-redis-"))
    try:
        embedded_redis.start(BASE_REDIS_URL, runtime)
    except embedded_redis.EmbeddedRedisError as exc:  # pragma: no cover - environment problem
        shutil.rmtree(runtime, ignore_errors=True)
        raise pytest.UsageError(
            f"no Redis answers at {BASE_REDIS_URL} and none could be started: {exc}"
        ) from exc
    config.stash[_EMBEDDED] = runtime


def _build_the_quantised_model() -> None:
    """A fresh checkout's first MiniLM use builds its quantised copy (seconds idle, a minute and
    more under a loaded suite): built here, once, before any test starts, no test's bound (the
    demo's wait for acknowledgements, a hook's answer) pays for it."""
    from swarmq.errors import SwarmqError
    from swarmq.similarity import onnx_embedder, quantized

    try:
        quantized.model_file(onnx_embedder._model_file())
    except SwarmqError:  # no MiniLM installed, or no cache: the tests that need it say so
        return


def pytest_unconfigure(config: pytest.Config) -> None:
    runtime = config.stash.get(_EMBEDDED, None)
    if runtime is not None:
        embedded_redis.stop(runtime)
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.hookimpl(trylast=True)  # after tests/chaos/conftest.py has marked its tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests (``slow``, ``chaos``) first, each group in its collected order: xdist
    hands tests out in this order, so the short ones fill the workers at the end instead of a
    long one starting last and running alone."""
    items.sort(
        key=lambda item: (
            item.get_closest_marker("slow") is None and item.get_closest_marker("chaos") is None
        )
    )


ISSUED: list[str] = []
"""Every swarm name this process handed out, swept again when its session ends: a worker a test
stopped may re-declare kombu's bindings (``_kombu.binding*``, no TTL) after the test's own sweep,
and the keys would outlive the suite in the test database."""


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """This worker's test database (see the module docstring); every key of a swarm this
    process named is deleted when the session ends."""
    if not answers(TEST_REDIS_URL, timeout=2.0):  # pragma: no cover - environment problem
        pytest.fail(f"no Redis answers at {TEST_REDIS_URL}")
    yield TEST_REDIS_URL
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        for name in ISSUED:
            batch = list(client.scan_iter(match=f"{keys.prefix(name)}*", count=1000))
            if batch:
                client.delete(*batch)
    finally:
        client.close()


@pytest.fixture
def swarm_name() -> str:
    name = f"t{uuid.uuid4().hex[:12]}"
    ISSUED.append(name)
    return name


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
