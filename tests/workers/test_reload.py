"""Roster changes take effect (digest per process, `up` and `reload` restart only what changed)
and monitoring is honest (a failed mission is a FAILURE in Flower's API, which persists)."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import yaml

from swarmq.roster.loader import load_roster
from swarmq.workers.processes import host_dir
from tests.coord.redis_server import free_port
from tests.support import REPO, write_roster
from tests.workers.test_processes import as_json, swarmq

pytestmark = pytest.mark.slow

AUTH = {"FLOWER_BASIC_AUTH": "admin:s3cret"}  # Flower 2 serves its API only behind auth
AGENT = [sys.executable, str(REPO / "tests" / "agent_script.py"), "{prompt_file}"]


def edit(config: Path, change: Any) -> None:
    data = yaml.safe_load(config.read_text())
    change(data)
    config.write_text(yaml.safe_dump(data, sort_keys=False))


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {a["name"]: a["outcome"] for a in report["actions"]}


def test_changed_entries_restart_alone_on_up_and_reload(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    workers = [
        {
            "id": "a",
            "role": "builder",
            "queues": ["missions"],
            "pool": "solo",
            "agent": {"command": [*AGENT, "--exit", "3"]},
        },
        {"id": "b", "role": "builder", "queues": ["forge", "missions"], "pool": "solo"},
    ]
    config = write_roster(tmp_path, swarm_name, redis_url, workers=workers)
    try:
        first = swarmq(config, "up", "--no-tmux", "--json")
        assert outcomes(as_json(first)) == {"a": "started", "b": "started", "beat": "started"}
        assert [w["path"] for w in as_json(first)["warnings"]] == ["workers[1](b).agent"]
        assert "consumes 'missions' but has no agent" in first.stderr.replace("\n", " ")
        if shutil.which("tmux"):  # asked for, not missing
            assert "tmux not found" not in first.stderr and "--no-tmux" in first.stderr
        digest = host_dir(load_roster(config)) / "pids" / "swarm-a.digest"  # this host's records
        assert digest.exists()

        again = as_json(swarmq(config, "up", "--no-tmux", "--json"))
        assert set(outcomes(again).values()) == {"already running"}

        edit(config, lambda d: d["workers"][0]["agent"].update(command=[*AGENT]))
        changed = as_json(swarmq(config, "up", "--no-tmux", "--json"))
        assert outcomes(changed) == {
            "a": "restarted",
            "b": "already running",
            "beat": "already running",
        }
        assert len(changed["warnings"]) == 1
        detail = next(a["detail"] for a in changed["actions"] if a["name"] == "a")
        assert "worker.agent" in detail and "answered" in changed and changed["answered"]["a"]

        edit(config, lambda d: d["workers"][1].update(concurrency=2))
        reloaded = as_json(swarmq(config, "reload", "--no-tmux", "--json"))
        assert outcomes(reloaded) == {"a": "unchanged", "b": "restarted", "beat": "unchanged"}
        assert reloaded["answered"] == {"b": True}
        assert "worker.concurrency" in next(
            a["detail"] for a in reloaded["actions"] if a["name"] == "b"
        )
        table = swarmq(config, "reload", "--no-tmux")
        assert table.returncode == 0 and "unchanged" in table.stdout
    finally:
        swarmq(config, "down", "--no-tmux", "--timeout", "20")
    assert not digest.exists()


def flower_task(port: int, task_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(
                f"http://127.0.0.1:{port}/api/task/info/{task_id}",
                timeout=3,
                auth=("admin", "s3cret"),
            )
            last = reply.status_code
            if reply.status_code == 200 and reply.json().get("state") in ("FAILURE", "SUCCESS"):
                return dict(reply.json())
        except httpx.TransportError as exc:
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"Flower never reported task {task_id} as finished: {last}")


def test_failed_mission_is_a_failure_in_flower_and_flower_keeps_it(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    port = free_port()
    workers = [
        {
            "id": "a",
            "role": "builder",
            "queues": ["missions"],
            "pool": "solo",
            "agent": {"command": [*AGENT, "--exit", "3"]},
        }
    ]
    config = write_roster(tmp_path, swarm_name, redis_url, workers=workers, flower={"port": port})
    try:
        up = swarmq(config, "up", "--no-tmux", "--flower", env=AUTH)
        assert up.returncode == 0, up.stderr
        assert f"Flower: http://127.0.0.1:{port}/" in up.stdout
        submitted = as_json(
            swarmq(config, "mission", "submit", "exit non-zero", "--worker", "a", "--json")
        )
        task_id = submitted["assignments"][-1]["id"]
        info = flower_task(port, task_id)
        assert info["state"] == "FAILURE" and "exited with status 3" in info["exception"]
        mission = as_json(swarmq(config, "mission", "show", submitted["id"], "--json"))
        assert mission["state"] == "failed"

        # A Flower restart (here: its port changed, so only Flower restarts) keeps the history.
        new_port = free_port()
        edit(config, lambda d: d["flower"].update(port=new_port))
        reloaded = as_json(swarmq(config, "reload", "--no-tmux", "--json", env=AUTH))
        assert outcomes(reloaded) == {"a": "unchanged", "beat": "unchanged", "flower": "restarted"}
        kept = flower_task(new_port, task_id)
        assert kept["state"] == "FAILURE"
    finally:
        swarmq(config, "down", "--no-tmux", "--timeout", "20")
