"""docker-compose.yml rendered from the roster, so the two can never disagree.

One service per roster worker (named ``<role>-<id>`` and labelled with its role, so a role can
be scaled or inspected as a group while each worker keeps its Swarm2 identity), exactly one
beat, Redis with AOF and ``noeviction``, Flower behind basic auth on loopback, and one shared
volume for the canonical files. The ``metrics`` profile adds the swarmq exporter, Prometheus
(``deploy/prometheus/``: scrape config and alert rules) and Grafana with the swarmq dashboard
(``deploy/grafana/``), all on loopback; ``docker compose up`` without the profile starts none.
"""

from __future__ import annotations

from typing import Any

import yaml

from swarmq.missions.config import WorkerConfig
from swarmq.roster.schema import Roster
from swarmq.workers.processes import celery_beat_args, celery_flower_args, celery_worker_args

HEADER = """\
# Generated from swarm.yaml by `swarmq roster compose > docker-compose.yml`; edit the roster and
# regenerate (a test checks that this file agrees with swarm.yaml).
# Run: FLOWER_BASIC_AUTH=admin:change-me docker compose up -d
# Metrics (swarmq exporter, Prometheus, Grafana on loopback; see docs/metrics.md):
#   SWARMQ_API_TOKEN=... docker compose --profile metrics up -d
"""

DATA = "/data"


def _environment(roster: Roster, worker_id: str | None = None) -> dict[str, str]:
    env = {
        "SWARMQ_CONFIG": "/app/swarm.yaml",
        "REDIS_URL": "redis://redis:6379/0",
        "SWARMQ_WORKSPACE": f"{DATA}/workspace",
        "SWARMQ_RUNTIME": f"{DATA}/runtime",
        "SWARMQ_HOME": f"{DATA}/home",
    }
    if worker_id is not None:
        env["SWARMQ_WORKER_ID"] = worker_id
    return env


def _common(roster: Roster) -> dict[str, Any]:
    return {
        "image": f"swarmq:{roster.swarm}",
        "build": ".",
        "volumes": ["swarm-data:/data", "./swarm.yaml:/app/swarm.yaml:ro"],
        "depends_on": {"redis": {"condition": "service_healthy"}},
        "restart": "unless-stopped",
    }


def worker_service_name(worker: WorkerConfig) -> str:
    return f"{worker.role}-{worker.id}".lower().replace("_", "-")


def _worker(roster: Roster, worker: WorkerConfig) -> dict[str, Any]:
    limit = roster.tasks.longest_time_limit()
    return {
        **_common(roster),
        "command": ["celery", *celery_worker_args(worker)],
        "environment": _environment(roster, worker.id),
        "labels": {
            "swarmq.swarm": roster.swarm,
            "swarmq.role": worker.role,
            "swarmq.worker": worker.id,
        },
        # SIGTERM starts Celery's warm shutdown; give running tasks their whole time limit.
        "stop_signal": "SIGTERM",
        "stop_grace_period": f"{int(limit)}s",
    }


def render(roster: Roster) -> dict[str, Any]:
    services: dict[str, Any] = {
        "redis": {
            "image": "redis:7-alpine",
            "command": [
                "redis-server",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--maxmemory-policy",
                "noeviction",
            ],
            "volumes": ["redis-data:/data"],
            "healthcheck": {
                "test": ["CMD", "redis-cli", "ping"],
                "interval": "5s",
                "timeout": "3s",
                "retries": 20,
            },
            "restart": "unless-stopped",
        }
    }
    for worker in roster.workers:
        services[worker_service_name(worker)] = _worker(roster, worker)
    services["beat"] = {
        **_common(roster),
        "command": ["celery", *celery_beat_args(f"{DATA}/runtime/celerybeat-schedule")],
        "environment": _environment(roster),
        "labels": {"swarmq.swarm": roster.swarm, "swarmq.role": "beat"},
        "deploy": {"replicas": 1},
    }
    services["flower"] = {
        **_common(roster),
        "command": ["celery", *celery_flower_args("0.0.0.0", roster.flower.port)],
        "environment": {
            **_environment(roster),
            "FLOWER_BASIC_AUTH": "${FLOWER_BASIC_AUTH:?set FLOWER_BASIC_AUTH=user:password}",
        },
        "ports": [f"127.0.0.1:{roster.flower.port}:{roster.flower.port}"],
        "labels": {"swarmq.swarm": roster.swarm, "swarmq.role": "flower"},
    }
    services.update(_metrics_services(roster))
    return {
        "name": f"swarmq-{roster.swarm}".lower(),
        "services": services,
        "volumes": {"swarm-data": {}, "redis-data": {}, "prometheus-data": {}, "grafana-data": {}},
    }


METRICS_PROFILE = "metrics"


def _metrics_services(roster: Roster) -> dict[str, Any]:
    """The optional observability services (``docker compose --profile metrics up -d``)."""
    port = roster.metrics.port
    token_env = roster.metrics.token_env or roster.api.token_env
    environment = _environment(roster)
    if token_env:
        environment[token_env] = f"${{{token_env}:-}}"
    prom = "./deploy/prometheus"
    return {
        "metrics": {
            **_common(roster),
            "command": ["swarmq", "metrics", "--host", "0.0.0.0", "--port", str(port)],
            "environment": environment,
            "labels": {"swarmq.swarm": roster.swarm, "swarmq.role": "metrics"},
            "profiles": [METRICS_PROFILE],
        },
        "prometheus": {
            "image": "prom/prometheus:v2.53.0",
            "command": [
                "--config.file=/etc/prometheus/prometheus.yml",
                "--storage.tsdb.retention.time=30d",
            ],
            "volumes": [
                f"{prom}/prometheus.yml:/etc/prometheus/prometheus.yml:ro",
                f"{prom}/alerts.yml:/etc/prometheus/alerts.yml:ro",
                f"{prom}/secrets/swarmq-token:/etc/prometheus/swarmq-token:ro",
                f"{prom}/secrets/flower-password:/etc/prometheus/flower-password:ro",
                "prometheus-data:/prometheus",
            ],
            "ports": ["127.0.0.1:9090:9090"],
            "depends_on": ["metrics", "flower"],
            "restart": "unless-stopped",
            "profiles": [METRICS_PROFILE],
        },
        "grafana": {
            "image": "grafana/grafana:11.1.0",
            "environment": {
                "GF_SECURITY_ADMIN_PASSWORD": "${GRAFANA_ADMIN_PASSWORD:-change-me}",
                "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH": "/var/lib/grafana/dashboards/swarmq.json",
            },
            "volumes": [
                "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro",
                "./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro",
                "grafana-data:/var/lib/grafana",
            ],
            "ports": ["127.0.0.1:3000:3000"],
            "depends_on": ["prometheus"],
            "restart": "unless-stopped",
            "profiles": [METRICS_PROFILE],
        },
    }


def render_text(roster: Roster) -> str:
    return HEADER + yaml.safe_dump(render(roster), sort_keys=False, width=120)
