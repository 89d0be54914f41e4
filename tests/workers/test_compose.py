"""docker-compose.yml parses and agrees with the example roster (no Docker engine runs here)."""

from __future__ import annotations

import yaml

from swarmq.roster.loader import load_roster
from swarmq.workers.compose import render, render_text, worker_service_name
from tests.support import REPO


def test_committed_compose_file_is_the_rendering_of_swarm_yaml() -> None:
    roster = load_roster(REPO / "swarm.yaml", env={"HOME": "/home/x"})
    committed = (REPO / "docker-compose.yml").read_text()
    assert committed == render_text(roster), (
        "regenerate: swarmq roster compose > docker-compose.yml"
    )


def test_compose_structure() -> None:
    roster = load_roster(REPO / "swarm.yaml", env={"HOME": "/home/x"})
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert data == render(roster)
    services = data["services"]
    redis_cmd = services["redis"]["command"]
    assert redis_cmd[redis_cmd.index("--appendonly") + 1] == "yes"
    assert redis_cmd[redis_cmd.index("--maxmemory-policy") + 1] == "noeviction"
    beats = [name for name, s in services.items() if "beat" in s.get("command", [])]
    assert beats == ["beat"] and services["beat"]["deploy"]["replicas"] == 1
    flower = services["flower"]
    assert all(port.startswith("127.0.0.1:") for port in flower["ports"])
    assert flower["environment"]["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")
    for worker in roster.workers:
        service = services[worker_service_name(worker)]
        cmd = service["command"]
        assert cmd[cmd.index("-Q") + 1].split(",") == worker.all_queues()
        assert cmd[cmd.index("-n") + 1] == f"{worker.id}@%h"
        assert service["labels"]["swarmq.role"] == worker.role
        assert service["environment"]["SWARMQ_WORKER_ID"] == worker.id
    optional = {name for name, s in services.items() if "metrics" in s.get("profiles", [])}
    assert optional == {"metrics", "prometheus", "grafana"}
    swarm_services = [s for name, s in services.items() if name not in {"redis", *optional}]
    assert all("swarm-data:/data" in s["volumes"] for s in swarm_services)
    assert "swarm-data:/data" in services["metrics"]["volumes"]
    assert set(data["volumes"]) == {"swarm-data", "redis-data", "prometheus-data", "grafana-data"}
    for name in ("prometheus", "grafana"):  # loopback only, like Flower
        assert all(port.startswith("127.0.0.1:") for port in services[name]["ports"])
    for mount in services["prometheus"]["volumes"] + services["grafana"]["volumes"]:
        source = mount.split(":", 1)[0]
        if source.startswith("./deploy/") and "/secrets/" not in source:
            assert (REPO / source).exists(), source
    worker_count = sum(1 for s in services.values() if "worker" in s.get("command", []))
    assert worker_count == len(roster.workers)
