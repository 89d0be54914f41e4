"""deploy/: the alert rules pass ``promtool check rules``, the scrape config ``promtool check
config``, and the Grafana dashboard loads: valid JSON, the fields Grafana needs, and every
swarmq metric a panel or a rule queries is one the exporter exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from swarmq.roster.loader import load_roster
from swarmq.wiring.figures import FigureReader
from swarmq.wiring.metrics import exposition, figure_registry
from tests.support import REPO

DEPLOY = REPO / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "swarmq.json"
RULES = DEPLOY / "prometheus" / "alerts.yml"
CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed (apt-get install prometheus; .ci/run does)"
)
METRIC = re.compile(r"\b(swarmq_[a-z_]+|flower_[a-z_]+)\b")


def exported(roster_file: Path) -> set[str]:
    """Every series name the exporter can answer (counters' _total, histograms' parts)."""
    roster = load_roster(roster_file)
    roster.metrics.daily_budget_usd = 1.0
    text = exposition(figure_registry(FigureReader(roster))).decode()
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        if family.type == "counter":
            names.add(f"{family.name}_total")
        if family.type == "histogram":
            names.update(f"{family.name}_{part}" for part in ("bucket", "count", "sum"))
    for line in text.splitlines():  # families whose samples appear only with data
        if line.startswith("# TYPE "):  # (a counter's TYPE line names it with _total)
            names.add(line.split()[2])
    names.add("swarmq_forge_last_run_timestamp_seconds")  # once a forge run recorded one
    return names


def queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])] + [
        r["expr"] for g in rules["groups"] for r in g["rules"]
    ]


@needs_promtool
def test_alert_rules_pass_promtool() -> None:
    done = subprocess.run(
        [str(PROMTOOL), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 7 rules found" in done.stdout


@needs_promtool
def test_scrape_config_passes_promtool(tmp_path: Path) -> None:
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    for job in config["scrape_configs"]:  # the secrets it names, as the container mounts them
        for holder, key in (("authorization", "credentials_file"), ("basic_auth", "password_file")):
            if holder in job:
                secret = tmp_path / Path(job[holder][key]).name
                secret.write_text("secret\n")
                job[holder][key] = str(secret)
    shutil.copy(RULES, tmp_path / "alerts.yml")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [str(PROMTOOL), "check", "config", str(tmp_path / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert {job["job_name"] for job in config["scrape_configs"]} == {"swarmq", "flower"}


def test_rules_cover_the_alerts_asked_for() -> None:
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    names = {r["alert"] for g in rules["groups"] for r in g["rules"]}
    assert {
        "SwarmqQuotaNearlySpentBeforeNoon",
        "SwarmqLLMCostOverBudget",
        "SwarmqNoForgeIn24h",
        "SwarmqInjectionSilent24h",
        "SwarmqDeadLetters",
        "SwarmqWorkerDown",
    } <= names


def test_dashboard_loads() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    assert dashboard["templating"]["list"][0]["type"] == "datasource"
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    graphs = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(graphs) >= 15
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert {"h", "w", "x", "y"} <= set(grid) and grid["x"] + grid["w"] <= 24, panel["title"]
    for panel in graphs:
        assert panel["type"] in {"timeseries", "piechart", "stat", "gauge", "table"}
        assert panel["targets"] and all(t["expr"] and t["refId"] for t in panel["targets"])
        assert panel["datasource"]["uid"] == "${datasource}"


def test_every_queried_swarmq_metric_is_exported(roster_file: Path) -> None:
    names = exported(roster_file)
    for expr in queries():
        for name in METRIC.findall(expr):
            if name.startswith("flower_"):
                continue  # Flower's own; the Prometheus test scrapes them
            assert name in names, f"{name} (in {expr!r}) is not exported"
