"""The group-commit committer runs on an executor thread: a process that adds and exits at once
must not leave the store lock held in Redis (a daemon thread killed mid-hold would, until the
lease ran out), and an add made while the interpreter exits still commits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import redis

from swarmq.coord import keys
from swarmq.coord.locks import RedisLocks
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.project import KnowledgeStore

SCRIPT = textwrap.dedent(
    """
    import sys, threading, redis
    from pathlib import Path
    from swarmq.coord.locks import RedisLocks
    from swarmq.knowledge.config import KnowledgeConfig
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.reinforcement import NewLesson

    url, swarm, root, late = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4] == "late"
    locks = RedisLocks(redis.Redis.from_url(url), swarm, lease_seconds=30)
    store = KnowledgeStore(root, locks=locks, config=KnowledgeConfig(hive_enabled=False),
                           data_dir=root.parent / "data")
    store.swarm.add(NewLesson("Always pin the pytest client version before the build step"))
    if late:  # a non-daemon thread adds while the main thread is already exiting
        threading.Thread(target=lambda: store.swarm.add(
            NewLesson("Never run the docker daemon as root on shared ci runners"))).start()
    """
)


def _run(tmp_path: Path, redis_url: str, swarm_name: str, late: bool) -> None:
    subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            redis_url,
            swarm_name,
            str(tmp_path / ".swarm"),
            "late" if late else "now",
        ],
        check=True,
        timeout=60,
    )


def _store(tmp_path: Path, client: redis.Redis, swarm_name: str) -> KnowledgeStore:
    return KnowledgeStore(tmp_path / ".swarm", locks=RedisLocks(client, swarm_name),
                          config=KnowledgeConfig(hive_enabled=False), data_dir=tmp_path / "data")  # fmt: skip


def test_an_add_then_exit_leaves_the_lock_free(
    tmp_path: Path, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    _run(tmp_path, redis_url, swarm_name, late=False)
    store = _store(tmp_path, redis_client, swarm_name)
    resource = store.swarm.files.resource
    assert redis_client.get(keys.lock(swarm_name, resource)) is None, (
        "the lock outlived the process"
    )
    assert [e.lesson for e in store.swarm.read().entries] == [
        "Always pin the pytest client version before the build step"
    ]


def test_an_add_made_while_the_interpreter_exits_commits(
    tmp_path: Path, redis_url: str, redis_client: redis.Redis, swarm_name: str
) -> None:
    _run(tmp_path, redis_url, swarm_name, late=True)
    store = _store(tmp_path, redis_client, swarm_name)
    assert redis_client.get(keys.lock(swarm_name, store.swarm.files.resource)) is None
    assert len(store.swarm.read().entries) == 2
