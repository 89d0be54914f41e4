"""Knowledge tasks through real Celery workers on real Redis and real files."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from swarmq.knowledge._sidecars import values
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks
from tests.support import WorkerProcess, write_roster

WORKERS = [
    {"id": "w1", "role": "keeper", "queues": ["maturity"], "concurrency": 4},
    {"id": "w2", "role": "keeper", "queues": ["maturity"], "concurrency": 4},
]
KNOWLEDGE = {
    "swarm_max_entries": None,
    "hive_enabled": False,
    "max_confirmed_by": 100_000,
    "quarantined_max_entries": 100_000,
    "rejected_max_entries": 100_000,
}


@pytest.fixture
def fast_root() -> Iterator[Path]:
    """Project files on tmpfs when there is one: real files, but fsync does not dominate."""
    base = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path("/tmp")
    root = base / f"swarmq-knowledge-{uuid.uuid4().hex[:10]}"
    root.mkdir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def roster_file(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis, fast_root: Path
) -> Path:
    path = write_roster(tmp_path, swarm_name, redis_url, workers=WORKERS, knowledge=KNOWLEDGE)
    data = path.read_text(encoding="utf-8").replace(
        str(tmp_path / "project"), str(fast_root / "project")
    )
    data = data.replace(str(tmp_path / "hive"), str(fast_root / "hive"))
    path.write_text(data, encoding="utf-8")
    (fast_root / "project").mkdir()
    return path


def local_knowledge(root: Path) -> KnowledgeStore:
    return KnowledgeStore(
        root / "project" / ".swarm",
        locks=LocalLocks(root / "locks"),
        config=KnowledgeConfig(**KNOWLEDGE),
        data_dir=root / "hive",
    )  # type: ignore[arg-type]


class LineWatcher(threading.Thread):
    """Reads the store files continuously: every line must parse at every moment."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__(daemon=True)
        self.paths = paths
        self.stop = threading.Event()
        self.reads = 0
        self.problems: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            for path in self.paths:
                data = self.settled(path)
                if data is None:
                    continue
                for number, line in enumerate(data.splitlines(), 1):
                    try:
                        json.loads(line)
                    except ValueError as exc:
                        self.problems.append(f"{path.name}:{number}: {exc}")
                self.reads += 1
            time.sleep(0.002)

    def settled(self, path: Path) -> bytes | None:
        """The file's bytes once its tail is a whole line.

        Linux makes no read atomic against a concurrent ``write``: an append that crosses a page
        boundary can be seen half copied for a few microseconds. That is not a torn write, so a
        tail without its newline is read again until the append completes; one that stays
        unterminated for a second is a problem."""
        deadline = time.monotonic() + 1.0
        while True:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                return None
            if not data or data.endswith(b"\n"):
                return data
            if time.monotonic() > deadline:
                self.problems.append(f"{path.name}: unterminated last line")
                return data
            time.sleep(0.001)


OPS = 300
"""Mixed operations per process: 2,400 in all from eight processes on two workers, enough for
every kind of operation to meet every other under the store's lock many times over."""


@pytest.mark.slow
@pytest.mark.timeout(420)  # a loaded CI machine runs this two to three times slower
def test_eight_processes_by_300_mixed_ops_lose_nothing(
    start_worker: Callable[..., WorkerProcess],
    celery_client: Celery,
    fast_root: Path,
) -> None:
    for worker in ("w1", "w2"):
        start_worker(
            worker,
            concurrency=4,
            extra_tasks=["swarmq.tasks.maturity", "tests.tasks.knowledge_stress"],
        )
    knowledge = local_knowledge(fast_root)
    watcher = LineWatcher([knowledge.swarm.files.knowledge, knowledge.swarm.files.quarantined])
    watcher.start()
    started = time.monotonic()
    results = [
        celery_client.send_task("maturity.test_stress", args=[w, OPS, 1000 + w], queue="maturity")
        for w in range(8)
    ]
    outcomes: list[dict[str, Any]] = [r.get(timeout=360) for r in results]
    elapsed = time.monotonic() - started
    watcher.stop.set()
    watcher.join()
    assert watcher.problems == [] and watcher.reads > 10

    active = [i for o in outcomes for i in o["active"]]
    quarantined = [i for o in outcomes for i in o["quarantined"]]
    reinforced: Counter[str] = Counter()
    for o in outcomes:
        reinforced.update(o["reinforced"])
    snapshot = knowledge.swarm.read()
    assert snapshot.corrupt == ()
    assert sorted(e.id for e in snapshot.entries) == sorted(active)  # no loss, no duplicate
    held = [v["id"] for v in values(knowledge.swarm.files.quarantined)]
    assert sorted(held) == sorted(quarantined)
    for entry in snapshot.entries:  # every reinforcement landed exactly once
        assert len(entry.confirmed_by) == 1 + reinforced[entry.id], entry.id
    totals: Counter[str] = Counter()
    for o in outcomes:
        totals.update(o["counts"])
    assert sum(totals.values()) == 8 * OPS
    assert totals["add"] == len(active) + len(quarantined)
    assert not knowledge.swarm.files.corrupt.exists()
    print(f"8x{OPS} mixed ops in {elapsed:.1f}s: {dict(totals)}")


def test_sweep_and_store_tasks_through_a_worker(
    start_worker: Callable[..., WorkerProcess],
    celery_client: Celery,
    fast_root: Path,
) -> None:
    start_worker("w1", concurrency=2, extra_tasks=["swarmq.tasks.maturity"])

    def call(name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = celery_client.send_task(
            f"maturity.{name}", args=args, kwargs=kwargs, queue="maturity"
        ).get(timeout=30)
        return result

    added = call("knowledge_add", "Run the python test suite before pushing to main", phase=1)
    assert added["outcome"] == "added"
    again = call("knowledge_add", "Run the python test suite before pushing to main!", phase=1)
    assert again == {**again, "outcome": "already_confirmed_phase", "id": added["id"]}
    assert call("knowledge_reinforce", added["id"], 2)["confirmations"] == 2
    assert call("knowledge_quarantine", added["id"], "check")["outcome"] == "quarantined"
    assert call("knowledge_restore", added["id"])["status"] == "candidate"
    first = call("sweep", 5)
    assert first["skipped"] is False and first["aged"] == 1
    assert call("sweep", 5)["skipped"] is True  # idempotent for a phase
    entry = local_knowledge(fast_root).swarm.get(added["id"])
    assert entry is not None and entry.phases_alive == 1
