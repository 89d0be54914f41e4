"""A real Prometheus (Debian's ``prometheus``) scrapes ``swarmq metrics`` and Flower, both
started by ``swarmq up --metrics --flower`` after ``swarmq demo``, and a PromQL query returns
every family the exporter exports; every dashboard query and alert rule evaluates cleanly."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from swarmq.llm.ledger import LedgerRecord, LLMLedger
from swarmq.roster.loader import load_roster
from swarmq.storage.call_latency import LatencyRecorder
from tests.metrics.test_deploy import DASHBOARD, RULES
from tests.support import REPO

PROMETHEUS = shutil.which("prometheus")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        PROMETHEUS is None, reason="prometheus not installed (apt-get install prometheus)"
    ),
]
TOKEN = "metrics-test-token"


def ports(count: int) -> list[int]:
    """``$SWARMQ_TEST_PORT_BASE`` and the next ones, else ports the kernel says are free."""
    base = os.environ.get("SWARMQ_TEST_PORT_BASE")
    if base:
        return [int(base) + i for i in range(count)]
    out = []
    for _ in range(count):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            out.append(s.getsockname()[1])
    return out


def wait_for(what: str, check: Callable[[], Any], timeout: float = 40.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.25)
    raise AssertionError(f"{what} within {timeout:.0f}s (last: {last!r})")


def test_prometheus_scrapes_every_family_after_a_demo(tmp_path: Path) -> None:
    prom_port, metrics_port, flower_port = ports(3)
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "REDIS_URL")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env["SWARMQ_API_TOKEN"] = TOKEN

    def swarmq(*args: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
        head = ["--config", str(config)] if config else []
        return subprocess.run(
            [sys.executable, "-m", "swarmq.cli", *head, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
            check=False,
        )

    demo = swarmq("demo", "--dir", str(tmp_path / "demo"), "--keep", "--no-tmux", "--json")
    assert demo.returncode == 0, demo.stderr[-4000:]
    config = Path(json.loads(demo.stdout)["config"])
    prometheus: subprocess.Popen[bytes] | None = None
    try:
        data = yaml.safe_load(config.read_text())
        data["flower"] = {"address": "127.0.0.1", "port": flower_port}
        data["metrics"] = {
            "port": metrics_port,
            "prices": {"demo-model": {"input_per_million": 3.0, "output_per_million": 15.0}},
            "daily_budget_usd": 1.0,
            "flywheel_every_seconds": 0,
        }
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        roster = load_roster(config)
        ledger = LLMLedger.in_runtime(roster.runtime_dir)  # as a metered curator call writes it
        ledger.append(
            LedgerRecord(
                "c1", 1, "enrichment", "2026-01-01", "openai", "demo-model", "ok", True,
                purpose="curator.enrich", tokens_in=900, tokens_out=200,
            )
        )  # fmt: skip
        for kind in ("hook", "mcp"):  # as a hook server and `swarmq mcp` leave their counts
            recorder = LatencyRecorder(roster.runtime_dir, kind, ("prompt",))
            recorder.observe("prompt", 0.004)
            recorder.close()
        up = swarmq("up", "--metrics", "--flower", "--no-tmux", "--wait", "0", config=config)
        assert up.returncode == 0, up.stdout + up.stderr

        token_file = tmp_path / "token"
        token_file.write_text(TOKEN + "\n")
        scrape = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [
                {
                    "job_name": "swarmq",
                    "authorization": {"type": "Bearer", "credentials_file": str(token_file)},
                    "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}],
                },
                {
                    "job_name": "flower",
                    "static_configs": [{"targets": [f"127.0.0.1:{flower_port}"]}],
                },
            ],
        }
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(scrape))
        log = (tmp_path / "prometheus.log").open("wb")
        prometheus = subprocess.Popen(
            [
                str(PROMETHEUS),
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        api = httpx.Client(base_url=f"http://127.0.0.1:{prom_port}", timeout=5.0)

        def query(expr: str) -> list[dict[str, Any]]:
            answer = api.get("/api/v1/query", params={"query": expr}).json()
            assert answer["status"] == "success", (expr, answer)
            result: list[dict[str, Any]] = answer["data"]["result"]
            return result

        wait_for("both targets up", lambda: len(query("up == 1")) == 2)
        exported = httpx.get(
            f"http://127.0.0.1:{metrics_port}/metrics",
            headers={"Authorization": f"Bearer {TOKEN}"},
        ).text
        families = sorted(
            {line.split()[2] for line in exported.splitlines() if line.startswith("# TYPE ")}
        )
        assert len(families) >= 40
        for family in families:
            suffix = "_count" if f"# TYPE {family} histogram" in exported else ""
            wait_for(f"{family} in Prometheus", lambda n=family + suffix: query(f"count({n})"), 15)
        assert query('swarmq_scrape_error{section="quotas"} == 0')
        assert query('swarmq_missions{state="complete"} >= 4')
        assert query("swarmq_forge_runs_total > 0") and query("swarmq_flywheel_artifacts")
        assert query('swarmq_llm_cost_dollars_total{model="demo-model"} > 0')
        wait_for("Flower's Celery figures", lambda: query("flower_worker_online == 1"))
        # Every dashboard query evaluates; every alert rule is loaded and healthy.
        dashboard = json.loads(DASHBOARD.read_text())
        for panel in dashboard["panels"]:
            for target in panel.get("targets", []):
                query(target["expr"])
        groups = wait_for(
            "rules evaluated",
            lambda: [
                g
                for g in api.get("/api/v1/rules").json()["data"]["groups"]
                if all(r.get("lastEvaluation", "0001").startswith("20") for r in g["rules"])
            ],
        )
        rules = [r for g in groups for r in g["rules"]]
        assert len(rules) == 7 and all(r["health"] == "ok" for r in rules), rules
    finally:
        if prometheus is not None:
            prometheus.terminate()
            prometheus.wait(timeout=20)
        down = swarmq("down", "--timeout", "20", config=config)
    assert down.returncode == 0, down.stdout + down.stderr
