"""`swarmq up`, `status`, `down` end to end: real tmux sessions, real workers, real Redis."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from swarmq.coord import keys
from swarmq.roster.loader import load_roster
from swarmq.workers.processes import host_dir
from tests.coord.redis_server import free_port
from tests.support import REPO, write_roster

pytestmark = pytest.mark.slow


def swarmq(
    config: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SWARMQ_CONFIG")}
    base["PYTHONPATH"] = str(REPO)
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "swarmq.cli", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=base,
    )


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def tmux_sessions(swarm: str) -> list[str]:
    done = subprocess.run(
        ["tmux", "-L", f"swarmq-{swarm}", "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
    )
    return sorted(done.stdout.split()) if done.returncode == 0 else []


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by .ci/run")
def test_up_twice_status_down_with_tmux(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    flower_port = free_port()
    config = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        flower={"port": flower_port},
        workers=[
            {"id": "w1", "role": "builder", "queues": ["missions", "forge"]},
            {
                "id": "w-2",
                "role": "curator",
                "queues": ["curator", "skills", "consolidation", "maturity"],
                "concurrency": 2,
                "pool": "threads",
            },
        ],
    )
    try:
        first = as_json(swarmq(config, "up", "--json"))
        assert first["redis"] == "external"
        assert [(a["name"], a["outcome"]) for a in first["actions"]] == [
            ("w1", "started"),
            ("w-2", "started"),
            ("beat", "started"),
        ]
        assert first["answered"] == {"w1": True, "w-2": True}
        assert tmux_sessions(swarm_name) == ["swarm-w-2", "swarm-w1", "swarmq-beat"]

        auth = {"FLOWER_BASIC_AUTH": "admin:s3cret"}
        second = as_json(swarmq(config, "up", "--flower", "--json", env=auth))
        assert [(a["name"], a["outcome"]) for a in second["actions"]] == [
            ("w1", "already running"),
            ("w-2", "already running"),
            ("beat", "already running"),
            ("flower", "started"),
        ]
        assert tmux_sessions(swarm_name) == [
            "swarm-w-2",
            "swarm-w1",
            "swarmq-beat",
            "swarmq-flower",
        ]
        flower = f"http://127.0.0.1:{flower_port}/"
        deadline = time.monotonic() + 30
        while True:
            try:
                denied = httpx.get(flower, timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "Flower did not start"
                time.sleep(0.3)
        assert denied.status_code == 401
        assert (
            httpx.get(flower + "workers", auth=("admin", "s3cret"), timeout=10).status_code == 200
        )

        status = as_json(swarmq(config, "status", "--json"))
        assert status["redis_up"] and status["redis_mode"] == "external"
        by_name = {p["name"]: p for p in status["processes"]}
        assert by_name["w1"]["running"] and by_name["w1"]["celery"] == "pong"
        assert sorted(by_name["w1"]["queues"]) == ["forge", "missions", "worker.w1"]
        assert by_name["w-2"]["celery"] == "pong" and "worker.w-2" in by_name["w-2"]["queues"]
        assert by_name["beat"]["running"]
        [host] = status["hosts"]  # one host: its Celery nodes and its own record
        assert host["this_host"] and sorted(n.split("@")[0] for n in host["nodes"]) == ["w-2", "w1"]
        assert {p["name"] for p in host["recorded"]} == {"w1", "w-2", "beat", "flower"}
        assert status["queue_lengths"]["worker.w1"] == 0
        assert redis_client.get(keys.beat_lock(swarm_name)) is not None
        table = swarmq(config, "status")
        assert table.returncode == 0 and "pong" in table.stdout

        down = as_json(swarmq(config, "down", "--json", "--timeout", "60"))
        assert sorted((a["name"], a["outcome"]) for a in down["actions"]) == [
            ("beat", "stopped"),
            ("flower", "stopped"),
            ("w-2", "stopped"),
            ("w1", "stopped"),
        ]
        assert tmux_sessions(swarm_name) == []
        assert redis_client.get(keys.beat_lock(swarm_name)) is None
        here = host_dir(load_roster(config, env={}))
        assert here.parent == tmp_path / "runtime" / "hosts"  # this host's records only
        assert not list((here / "pids").glob("*.pid"))
        assert json.loads((here / "host.json").read_text())["processes"] == []
        assert (
            "warm shutdown" in (here / "logs" / "swarm-w1.log").read_text(errors="replace").lower()
        )
    finally:
        swarmq(config, "down", "--timeout", "20")
        subprocess.run(["tmux", "-L", f"swarmq-{swarm_name}", "kill-server"], capture_output=True)


def test_embedded_redis_without_tmux(tmp_path: Path, swarm_name: str) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    config = write_roster(
        tmp_path, swarm_name, url, workers=[{"id": "solo", "role": "r", "queues": ["missions"]}]
    )
    try:
        up = as_json(swarmq(config, "up", "--no-tmux", "--json"))
        assert up["redis"] == "embedded (started)" and up["answered"] == {"solo": True}
        aof = list((tmp_path / "runtime" / "redis").glob("appendonly*"))
        assert aof, "the embedded Redis must append to an AOF"
        client = redis.Redis.from_url(url)
        assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        status = as_json(swarmq(config, "status", "--no-tmux", "--json"))
        assert status["redis_mode"] == "embedded" and status["processes"][0]["celery"] == "pong"
        down = as_json(swarmq(config, "down", "--no-tmux", "--json"))
        assert ("redis", "stopped") in [(a["name"], a["outcome"]) for a in down["actions"]]
        with pytest.raises(redis.ConnectionError):
            client.ping()
    finally:
        swarmq(config, "down", "--no-tmux", "--timeout", "20")


def test_invalid_roster_starts_nothing(tmp_path: Path, swarm_name: str, redis_url: str) -> None:
    config = tmp_path / "swarm.yaml"
    config.write_text(
        f"swarm: {swarm_name}\nredis_url: {redis_url}\nworkers:\n  - id: ../evil\n    role: x\n"
    )
    done = swarmq(config, "up")
    assert done.returncode == 1
    assert "workers[0](../evil).id" in done.stderr and "nothing was done" in done.stderr
    assert tmux_sessions(swarm_name) == []
    assert not (tmp_path / ".runtime").exists()


def test_unreachable_redis_url_is_named(tmp_path: Path, swarm_name: str) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    config = write_roster(tmp_path, swarm_name, "redis://127.0.0.1:6379/15")
    done = swarmq(config, "up", env={"REDIS_URL": url})
    assert done.returncode == 1
    assert f"Redis at {url} (from REDIS_URL) is unreachable" in done.stderr.replace("\n", "")
    quota = swarmq(config, "quota", "status", env={"REDIS_URL": url})
    assert quota.returncode == 1 and f"Redis at {url} is unreachable" in quota.stderr.replace(
        "\n", ""
    )
