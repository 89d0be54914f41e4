"""Store locks on a real Redis: mutual exclusion across processes, leases, fencing."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.locks import RedisLocks
from swarmq.storage.atomic import read_fence, write_atomic
from swarmq.storage.locking import (
    CommitUnconfirmed,
    FencedOff,
    LocalLocks,
    LockTimeout,
    StoreLocks,
    confirm_by_release,
    file_resource,
)


def _increment(locks: StoreLocks, path: Path, times: int) -> None:
    for _ in range(times):
        with locks.hold(file_resource(path), timeout=30) as lease:
            value = int(path.read_text()) if path.exists() else 0
            write_atomic(path, str(value + 1), lease=lease)


def _redis_worker(url: str, swarm: str, path: str, times: int) -> None:
    _increment(RedisLocks(redis.Redis.from_url(url), swarm, lease_seconds=5), Path(path), times)


def _local_worker(lock_dir: str, path: str, times: int) -> None:
    _increment(LocalLocks(Path(lock_dir)), Path(path), times)


def test_two_processes_contending_lose_no_update(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    counter = tmp_path / "counter.txt"
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=_redis_worker, args=(redis_url, swarm_name, str(counter), 150))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert counter.read_text() == "300"
    assert read_fence(counter) == 300  # one fencing token per holder, monotonic


def test_local_locks_serialise_processes_on_one_host(tmp_path: Path) -> None:
    counter = tmp_path / "counter.txt"
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=_local_worker, args=(str(tmp_path / "locks"), str(counter), 100))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert counter.read_text() == "200"


def _stalling_holder(
    url: str, swarm: str, path: str, ready: object, go: object, out: object
) -> None:
    locks = RedisLocks(redis.Redis.from_url(url), swarm, lease_seconds=0.6)
    lease = locks.acquire(file_resource(path))
    ready.set()  # type: ignore[attr-defined]
    go.wait()  # type: ignore[attr-defined]
    try:
        write_atomic(Path(path), "stale holder's write", lease=lease)
        out.put("written")  # type: ignore[attr-defined]
    except FencedOff as exc:
        out.put(f"fenced: {exc}")  # type: ignore[attr-defined]
    out.put(locks.release(lease))  # type: ignore[attr-defined]


def test_a_holder_stalled_past_its_lease_is_fenced_off(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    target = tmp_path / "knowledge.jsonl"
    target.write_text("original\n")
    ctx = mp.get_context("spawn")
    ready, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    holder = ctx.Process(
        target=_stalling_holder, args=(redis_url, swarm_name, str(target), ready, go, out)
    )
    holder.start()
    assert ready.wait(10)
    assert holder.pid is not None
    os.kill(holder.pid, signal.SIGSTOP)  # a GC pause, a swapped-out VM, a debugger...
    try:
        locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
        with locks.hold(file_resource(target), timeout=5) as lease:  # the lease lapsed: we get it
            write_atomic(target, "newer write", lease=lease)
    finally:
        os.kill(holder.pid, signal.SIGCONT)
    go.set()
    verdict = out.get(timeout=10)
    released = out.get(timeout=10)
    holder.join(timeout=10)
    assert verdict.startswith("fenced:"), verdict
    assert "write refused" in verdict or "refusing to write" in verdict
    assert released is False  # owner-only release: the stale holder cannot free our lock
    assert target.read_text() == "newer write"
    assert not list(tmp_path.glob(".knowledge.jsonl.tmp-*"))  # its temp file was removed


def test_a_commit_confirmed_by_its_release_fails_when_the_lock_lapsed_after_the_rename(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    target = tmp_path / "ledger.json"
    with locks.hold(file_resource(target)) as lease:  # the GET of confirm() folded into the release
        write_atomic(target, "one", lease=lease, confirm=False)
        confirm_by_release(lease)
    assert target.read_text() == "one"
    lapsed = pytest.raises(CommitUnconfirmed, match="no longer this holder's")
    with lapsed, locks.hold(file_resource(target)) as lease:
        write_atomic(target, "two", lease=lease, confirm=False)
        redis_client.delete(keys.lock(swarm_name, file_resource(target)))  # lapsed after the rename
        confirm_by_release(lease)
    with pytest.raises(RuntimeError, match="body"), locks.hold(file_resource(target)):
        redis_client.delete(keys.lock(swarm_name, file_resource(target)))
        raise RuntimeError("body")  # the body's own error is never replaced


def test_lock_timeout_and_owner_only_release(redis_client: redis.Redis, swarm_name: str) -> None:
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    first = locks.acquire("store:x")
    with pytest.raises(LockTimeout, match=r"could not lock 'store:x' within 0.2s"):
        locks.acquire("store:x", timeout=0.2)
    imposter = locks.try_acquire("store:y")
    assert imposter is not None
    imposter.token = first.token + "x"  # never the owner of store:x
    assert locks.release(first) is True
    again = locks.acquire("store:x", timeout=1)
    assert again.fencing_token == first.fencing_token + 1
    locks.release(again)
    locks.release(imposter)


def test_watchdog_keeps_a_long_holder_alive(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=0.3)
    path = tmp_path / "f"
    with locks.hold(file_resource(path)) as lease:
        time.sleep(1.0)  # three leases long
        write_atomic(path, "ok", lease=lease)
    assert path.read_text() == "ok"


def test_a_redis_that_lost_its_keys_does_not_block_the_rightful_owner(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.json"
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    for _ in range(3):
        with locks.hold(file_resource(path)) as lease:
            write_atomic(path, "v", lease=lease)
    assert read_fence(path) == 3
    redis_client.delete(keys.fence(swarm_name, file_resource(path)))  # the counter restarts at 1
    with locks.hold(file_resource(path)) as lease:
        assert lease.fencing_token == 1
        write_atomic(path, "after restart", lease=lease)
        assert lease.fencing_token == 4  # moved past the recorded token
    assert path.read_text() == "after restart" and read_fence(path) == 4


@pytest.mark.usefixtures("long_hold")
def test_a_group_commit_leader_whose_lock_is_taken_over_mid_hold_writes_no_more(
    swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    """After each hold's first write another holder takes the Redis lock: the leader's next
    group in that hold is refused (real fencing), every acknowledged add is on disk."""
    import threading
    from collections.abc import Callable, Iterator
    from contextlib import contextmanager

    from swarmq.knowledge.config import KnowledgeConfig
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.reinforcement import NewLesson
    from swarmq.storage.locking import Lease

    inner = RedisLocks(redis_client, swarm_name, lease_seconds=5)

    class TakenOver:
        @contextmanager
        def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
            with inner.hold(resource, timeout=timeout) as lease:
                confirm, start_confirm = lease.confirm, lease.start_confirm  # type: ignore[attr-defined]

                def steal() -> None:
                    redis_client.set(keys.lock(swarm_name, resource), "another", px=30)

                def taken_over() -> None:
                    confirm()
                    steal()

                def taken_over_later() -> Callable[[], None]:  # confirmed during the fsync
                    finish = start_confirm()

                    def then_taken_over() -> None:
                        finish()
                        steal()

                    return then_taken_over

                lease.confirm = taken_over  # type: ignore[method-assign]
                lease.start_confirm = taken_over_later  # type: ignore[attr-defined]
                yield lease

    knowledge = KnowledgeStore(
        tmp_path / ".swarm",
        locks=TakenOver(),
        config=KnowledgeConfig(hive_enabled=False),
        data_dir=tmp_path / "data",
        project_name="proj",
    )
    added: list[str] = []
    refused: list[str] = []
    topics = ["pytest", "docker", "postgres", "redis", "celery", "ruff", "mypy", "nginx"]

    def writer(w: int) -> None:
        for n in range(w, 48, 8):
            text = f"Always pin the {topics[w]} client version {n * 7919} before step {n}"
            try:
                outcome = knowledge.swarm.add(NewLesson(text), phase=1).outcome
            except FencedOff:
                refused.append(text)
                continue
            if outcome == "added":
                added.append(text)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert refused, "no hold went on to a second group"
    assert added, "no hold's first group was written"
    assert sorted(e.lesson for e in knowledge.swarm.read().entries) == sorted(added)
