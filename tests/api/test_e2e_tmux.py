"""End to end: `swarmq up` starts the worker in tmux, a mission goes in through the API, the real
agent runs and every piece of memory (ledger, events, episodes, SUMMARY, handoffs, archive,
runtime.json, the pane's output) comes out right."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from swarmq.api.app import create_app
from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.roster.loader import load_roster
from swarmq.workers.processes import host_dir
from tests.support import REPO, client_app, wait_for_file, write_roster
from tests.workers.test_processes import as_json, swarmq

pytestmark = pytest.mark.slow


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by .ci/run")
def test_mission_through_api_on_tmux_worker(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    agent = {
        "command": [sys.executable, str(REPO / "tests" / "agent_script.py"), "{prompt_file}"],
        "timeout_seconds": 60,
    }
    config = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=[
            {
                "id": "w1",
                "name": "Builder One",
                "role": "builder",
                "specialty": "backend",
                "queues": ["missions"],
                "agent": agent,
            }
        ],
    )
    roster = load_roster(config, env={})
    celery = client_app(config)
    cluster = Cluster.connect(roster.cluster_config())
    try:
        up = as_json(swarmq(config, "up", "--json"))
        assert up["answered"] == {"w1": True}
        memory = tmp_path / "profiles" / "w1" / "memory"
        assert "Builder One" in (memory / "IDENTITY.md").read_text()
        client = MissionClient(roster, celery=celery, locks=cluster.locks)
        with TestClient(create_app(roster, client=client)) as api:
            created = api.post(
                "/api/missions",
                json={"objective": "Add the parser", "role": "builder", "clientKey": "e2e-1"},
            )
            assert created.status_code == 201, created.text
            mission_id = created.json()["mission"]["id"]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                shown = api.get(f"/api/missions/{mission_id}").json()["mission"]
                if shown["state"] not in ("planning", "executing"):
                    break
                time.sleep(0.3)
            assert shown["state"] == "complete", shown
            types = [e["type"] for e in shown["events"]]
            assert types[:2] == ["mission-start", "dispatch"] and "checkpoint" in types
            assert types[-2:] == ["complete", "handoff-written"]
            mission = api.get(
                "/api/swarm-memory",
                params={"workerId": "w1", "kind": "mission", "missionId": mission_id},
            ).json()
            files = {f["name"]: f["content"] for f in mission["files"]}
            assert (
                "- Status: complete" in files["SUMMARY.md"]
                and "- implemented the change" in files["SUMMARY.md"]
            )
            assert "- src/example.py" in files["SUMMARY.md"]
            assert (
                "Open the pull request." in files["handoff.md"]
                and "pytest -q" in files["handoff.md"]
            )
            episodes = api.get(
                "/api/swarm-memory", params={"workerId": "w1", "kind": "episodic"}
            ).json()
            assert "— checkpoint" in episodes["files"][0]["content"]
            found = api.get(
                "/api/swarm-memory/search",
                params={"workerId": "w1", "query": "implemented the change"},
            )
            assert found.json()["results"][0]["match"] == "phrase"
        ledger = json.loads((tmp_path / "runtime" / "swarm-missions.json").read_text())
        record = ledger["missions"][mission_id]
        assert (
            record["assignments"][0]["state"] == "complete"
            and record["assignments"][0]["attempts"] == 1
        )
        assert ledger["clientKeys"] == {"e2e-1": mission_id}
        assert (
            (tmp_path / "shared" / "handoffs" / "swarm" / "w1-latest.md")
            .read_text()
            .startswith("# Handoff — w1")
        )
        archive = tmp_path / "shared" / "swarm" / "missions" / mission_id
        wait_for_file(archive / "mission.json")  # written last, after the ledger says complete
        assert {p.name for p in archive.iterdir() if p.is_file()} == {
            "SUMMARY.md",
            "events.jsonl",
            "handoff.md",
            "mission.json",
        }
        runtime = json.loads((tmp_path / "profiles" / "w1" / "runtime.json").read_text())
        assert runtime["state"] == "idle" and runtime["lastMissionId"] == mission_id
        # The agent's output went to the worker's terminal (its tmux pane, logged by the launcher).
        pane = subprocess.run(
            [
                "tmux",
                "-L",
                f"swarmq-{swarm_name}",
                "capture-pane",
                "-p",
                "-S",
                "-200",
                "-t",
                "=swarm-w1",
            ],
            capture_output=True,
            text=True,
        ).stdout
        log = (host_dir(client.roster) / "logs" / "swarm-w1.log").read_text(errors="replace")
        assert f"[w1 {mission_id}] CHECKPOINT: implemented the change" in pane + log
        status = as_json(swarmq(config, "status", "--json"))
        w1 = next(p for p in status["processes"] if p["name"] == "w1")
        assert w1["runtime"] is None or w1["runtime"]["lastMissionId"] == mission_id
    finally:
        swarmq(config, "down", "--timeout", "30")
        subprocess.run(["tmux", "-L", f"swarmq-{swarm_name}", "kill-server"], capture_output=True)
        celery.close()
        cluster.close()
