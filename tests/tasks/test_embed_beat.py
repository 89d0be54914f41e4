"""The default ``maturity.embed`` entry through a real beat and a real worker on Redis: with no
``schedule:`` in the roster, a store whose entries have no vectors gets them all under MiniLM;
a run that finds another holding the fill's lock skips (nothing embedded while it is held), and
the runs after it embed every entry exactly once between them."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import redis

from swarmq.coord.locks import RedisLocks
from swarmq.knowledge.config import DenseModel
from swarmq.knowledge.vectors import missing
from swarmq.names import MATURITY_EMBED
from swarmq.roster.loader import load_roster
from swarmq.tasks.maturity import EMBED_LOCK
from swarmq.wiring.knowledge import knowledge_store
from swarmq.workers.config import build_beat_schedule
from tests.support import REPO, WorkerProcess, client_app, worker_env, write_roster

STORE = REPO / "eval" / "knowledge" / "workspaces" / "clipsanitizer" / ".swarm" / "knowledge.jsonl"
ENTRIES = 53
RESULT = re.compile(r"maturity\.embed\[[^\]]+\] succeeded in [0-9.]+s: (\{.*\})")


def results(log: str) -> list[dict[str, object]]:
    return [ast.literal_eval(m.group(1)) for m in RESULT.finditer(log)]


def wait(condition: object, timeout: float, what: str, log: WorkerProcess) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} not within {timeout:.0f}s\n{log.log()}")


def test_the_default_beat_fills_a_stores_vectors_one_run_at_a_time(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    path = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=[{"id": "k1", "role": "keeper", "queues": ["maturity"], "concurrency": 2}],
        knowledge={"hive_enabled": False, "embed_every_seconds": 1},
    )
    roster = load_roster(path, env={})
    assert roster.knowledge.model is DenseModel.MINILM and not roster.schedule
    assert MATURITY_EMBED in build_beat_schedule(roster)
    (roster.swarm_dir).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STORE, roster.swarm_dir / "knowledge.jsonl")
    locks = RedisLocks(redis_client, swarm_name)
    knowledge = knowledge_store(roster, locks)
    assert missing(knowledge) == {"swarm": None}  # no vectors yet

    app = client_app(path)
    worker = WorkerProcess(path, "k1", concurrency=2)
    beat: subprocess.Popen[bytes] | None = None
    held = locks.acquire(EMBED_LOCK)  # another run holds the fill
    try:
        worker.start(app, timeout=60)
        beat_log = (tmp_path / "beat.log").open("ab")
        beat = subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "swarmq.workers.app", "beat"),
                *("-s", str(tmp_path / "celerybeat-schedule"), "-l", "INFO"),
            ],
            env=worker_env(path, "beat"),
            stdout=beat_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait(lambda: {"busy": True} in results(worker.log()), 60, "a skipped run", worker)
        assert missing(knowledge) == {"swarm": None}  # nothing embedded while it is held
        locks.release(held)
        wait(lambda: missing(knowledge) == {"swarm": 0}, 90, "every vector filled", worker)
        time.sleep(2.5)  # a few more beats: runs with nothing left to embed
        runs = [r for r in results(worker.log()) if r.get("busy") is False]
        embedded = [r["embedded"]["swarm"] for r in runs]  # type: ignore[index]
        assert sum(embedded) == ENTRIES, (embedded, worker.log())  # no entry embedded twice
        assert runs[-1]["done"] is True
    finally:
        if beat is not None:
            beat.terminate()
            beat.wait(timeout=20)
        worker.stop()
        app.close()
        locks.release(held)
