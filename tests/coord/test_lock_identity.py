"""Lock names that do not depend on where a host mounts the workspace, fence records that refuse
another lock name, and commits that are never reported done when their lease lapsed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.locks import RedisLocks
from swarmq.storage.atomic import read_fence_record, write_atomic
from swarmq.storage.locking import FencedOff, file_resource
from swarmq.storage.workspace_id import (
    ID_FILE,
    WorkspaceIdError,
    ensure_root_id,
    lock_name,
    read_root_id,
)
from tests.support import REPO


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def writer(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", "tests.coord.lock_writer", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
    )


def outcome(proc: subprocess.Popen[str], timeout: float = 120) -> dict[str, list[str]]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return dict(json.loads(out.strip().splitlines()[-1]))


def test_the_lock_name_is_the_workspace_id_and_the_relative_path(tmp_path: Path) -> None:
    host_a, host_b = tmp_path / "mnt-a" / "ws", tmp_path / "elsewhere" / "ws"
    ids = ensure_root_id(host_a, "cluster")
    host_b.mkdir(parents=True)
    shutil.copy(host_a / ID_FILE, host_b / ID_FILE)  # the same workspace, seen by another host
    name = lock_name(host_a / ".swarm" / "knowledge.jsonl")
    assert name == f"ws:{ids.id}:.swarm/knowledge.jsonl"
    assert lock_name(host_b / ".swarm" / "knowledge.jsonl") == name
    assert file_resource(host_a / ".swarm") == f"ws:{ids.id}:.swarm"
    assert ensure_root_id(host_a, "single-host") == ids  # created once, never replaced
    assert (
        lock_name(tmp_path / "unmarked" / "f")
        == f"file:{os.path.realpath(tmp_path / 'unmarked' / 'f')}"
    )


def test_a_malformed_id_file_is_named(tmp_path: Path) -> None:
    (tmp_path / ID_FILE).write_text('{"id": "nope"}')
    with pytest.raises(WorkspaceIdError, match=rf"{ID_FILE}: expected"):
        read_root_id(tmp_path)


def test_a_writer_holding_another_lock_name_is_refused_not_advanced(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.json"
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    for _ in range(3):
        with locks.hold("ws:aaaa:store.json") as lease:
            write_atomic(path, "by host a", lease=lease)
    assert read_fence_record(path) == (3, "ws:aaaa:store.json")
    with (
        locks.hold("file:/mnt/b/store.json") as lease,
        pytest.raises(FencedOff, match="two lock names"),
    ):
        write_atomic(path, "by host b", lease=lease)
    assert path.read_text() == "by host a"


def test_fence_counters_expire_and_the_owner_moves_past_the_recorded_token(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.json"
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    for _ in range(3):
        with locks.hold(file_resource(path)) as lease:
            write_atomic(path, "v", lease=lease)
    ttl = redis_client.pttl(keys.fence(swarm_name, file_resource(path)))
    assert 0 < ttl <= locks.fence_ttl_ms  # bounded Redis: no counter lives forever
    redis_client.delete(keys.fence(swarm_name, file_resource(path)))  # as if it expired
    with locks.hold(file_resource(path)) as lease:
        write_atomic(path, "after expiry", lease=lease)
        assert lease.fencing_token == 4
    assert read_fence_record(path)[0] == 4


@pytest.mark.skipif(
    shutil.which("unshare") is None or os.geteuid() != 0,
    reason="needs root and unshare(1) to bind-mount the workspace at a second path",
)
def test_two_mount_paths_of_one_workspace_lose_nothing(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Host A sees the workspace at ``ws``; host B (a private mount namespace) at ``mnt-b``."""
    workspace, mount_b = tmp_path / "ws", tmp_path / "mnt-b"
    ensure_root_id(workspace, "cluster")
    mount_b.mkdir()
    target = Path(".swarm") / "counter.json"
    (workspace / ".swarm").mkdir()
    script = f'mount --bind {workspace} {mount_b} && exec "$@"'
    procs = [writer("many", redis_url, swarm_name, str(workspace / target), "150", "5", "a")]
    procs.append(
        writer(
            "many",
            redis_url,
            swarm_name,
            str(mount_b / target),
            "150",
            "5",
            "b",
            prefix=("unshare", "-m", "sh", "-c", script, "sh"),
        )
    )
    results = [outcome(p) for p in procs]
    on_disk = json.loads((workspace / target).read_text())
    assert not os.listdir(mount_b)  # the bind mount stayed inside its namespace
    ok = [item for r in results for item in r["ok"]]
    assert sorted(on_disk) == sorted(ok) and len(ok) == 300, results  # issue 14's bar: 0 lost


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "T"


def stalled_commit_once(
    redis_url: str, swarm: str, path: Path
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """A holder stops between fence check and rename past its lease; another writes meanwhile."""
    holder = writer("stall", redis_url, swarm, str(path), "0.3", "stalled")
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    deadline = time.monotonic() + 30
    while not _stopped(holder.pid):
        assert time.monotonic() < deadline and holder.poll() is None
        time.sleep(0.01)
    time.sleep(0.5)  # past its lease: its watchdog is stopped too
    other = writer("many", redis_url, swarm, str(path), "1", "5", "other")
    assert other.stdout is not None
    assert other.stdout.readline().strip() == "held"
    time.sleep(0.2)  # it has read the file and waits for the commit lock the stalled one holds
    os.kill(holder.pid, 18)  # SIGCONT
    return outcome(holder), outcome(other)


def test_a_holder_stalled_between_check_and_rename_never_reports_success(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "entries.json"
    path.write_text("[]")
    stalled, other = stalled_commit_once(redis_url, swarm_name, path)
    on_disk = json.loads(path.read_text())
    assert stalled["ok"] == [] and stalled["unconfirmed"] == ["stalled"], stalled
    assert other["ok"] == ["other-0"] and on_disk == ["other-0"]  # the stale-read write won
