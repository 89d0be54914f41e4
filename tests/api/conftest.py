from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from swarmq.api.app import create_app
from swarmq.client import MissionClient
from swarmq.coord.cluster import Cluster
from swarmq.roster.loader import load_roster
from swarmq.wiring.profiles import ensure_roster_profiles
from tests.support import REPO, write_roster

AGENT = {
    "command": [sys.executable, str(REPO / "tests" / "agent_script.py"), "{prompt_file}"],
    "timeout_seconds": 30,
}


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=[
            {"id": "w1", "role": "builder", "queues": ["missions"], "agent": AGENT},
            {"id": "w2", "role": "curator", "queues": ["curator"]},
        ],
        missions={"ping_timeout_seconds": 0.2},
    )


@pytest.fixture
def api(roster_file: Path, celery_client: Any) -> Iterator[TestClient]:
    roster = load_roster(roster_file, env={})
    cluster = Cluster.connect(roster.cluster_config())
    ensure_roster_profiles(roster, cluster.locks)
    client = MissionClient(roster, celery=celery_client, locks=cluster.locks)
    with TestClient(create_app(roster, client=client)) as http:
        yield http
    cluster.close()
