"""The scrape says what the CLI says: ``quota status``, ``llm usage``, ``flywheel status``,
``deadletter list`` and the knowledge store itself give the same numbers as ``/metrics``
(real Redis, real files, the real API over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from swarmq.api.app import create_app
from swarmq.cli import app as cli
from swarmq.coord.cluster import Cluster
from swarmq.knowledge._receipts import OUTCOMES
from swarmq.llm.ledger import LedgerRecord, LLMLedger
from swarmq.names import DEAD_LETTER_FILE
from swarmq.roster.loader import load_roster
from swarmq.storage.atomic import append_jsonl
from swarmq.wiring.figures import ACK_VERDICTS, FigureReader, by_name
from swarmq.wiring.knowledge import knowledge_store
from swarmq.wiring.metrics import exposition, figure_registry

LESSONS = [
    "Run the lease tests in tests/coord before pushing any change to the lock code",
    "Set worker_prefetch_multiplier to 1 so a long task never holds a second message",
]


def run(roster: Path, *args: str) -> Any:
    done = CliRunner().invoke(cli, ["--config", str(roster), *args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@pytest.fixture
def swarm(roster_file: Path) -> Path:
    data = yaml.safe_load(roster_file.read_text())
    data["llm"] = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m1"}
    data["metrics"] = {
        "prices": {"m1": {"input_per_million": 3.0, "output_per_million": 15.0}},
        "daily_budget_usd": 5.0,
        "flywheel_every_seconds": 0,
    }
    roster_file.write_text(yaml.safe_dump(data))
    return roster_file


def fill(path: Path) -> None:
    """A little of everything: quota calls, LLM attempts, lessons, injections, acks, a dead
    letter."""
    roster = load_roster(path)
    cluster = Cluster.connect(roster.cluster_config())
    gate = cluster.gate
    for _ in range(2):
        gate.start(gate.reserve("enrichment"))
    gate.reserve("enrichment")  # held, not started
    ledger = LLMLedger.in_runtime(roster.runtime_dir)
    for outcome, tokens in (("ok", (1200, 300)), ("ok", (800, 100)), ("timeout", (None, None))):
        ledger.append(
            LedgerRecord(
                "c1", 1, "enrichment", "2026-01-01", "openai", "m1", outcome, True,
                purpose="curator.enrich", tokens_in=tokens[0], tokens_out=tokens[1],
            )
        )  # fmt: skip
    ledger.append(
        LedgerRecord(
            "c2", 1, "enrichment", None, "openai", "m1", "quota_exhausted", False,
            purpose="curator.enrich",
        )
    )  # fmt: skip
    ledger.append(
        LedgerRecord(
            "c3", 1, "skill_improver", "2026-01-01", "openai", "m1", "reply_rejected", True,
            purpose="skills.improve", event="reply_rejected",
        )
    )  # fmt: skip
    for lesson in LESSONS:
        run(path, "knowledge", "add", "--plain", lesson)
    done = CliRunner().invoke(
        cli, ["--config", str(path), "learn", "Never hand-edit docker-compose.yml; regenerate it"]
    )
    assert done.exit_code == 0, done.output
    shown = run(path, "knowledge", "inject", "change the lock code and run the lease tests")
    assert shown["shown"], "the lesson about lease tests is relevant"
    silent = run(path, "knowledge", "inject", "paint the bikeshed purple")
    assert not silent["shown"]
    entry = shown["shown"][0]["id"]
    run(path, "knowledge", "ack", f"KNOWLEDGE_APPLIED:{shown['trace_id']}:{entry}")
    append_jsonl(roster.runtime_dir / DEAD_LETTER_FILE, [{"task": "forge.extract", "at": "x"}])
    cluster.close()


def test_scrape_agrees_with_the_cli(swarm: Path) -> None:
    fill(swarm)
    roster = load_roster(swarm)
    client = TestClient(create_app(roster, token="t0k"))
    assert client.get("/metrics").status_code == 401
    answer = client.get("/metrics", headers={"Authorization": "Bearer t0k"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    got = samples(answer.text)

    def value(name: str, **labels: str) -> float:
        return got[(name, tuple(sorted(labels.items())))]

    assert all(value("swarmq_scrape_error", section=s) == 0 for s in ("quotas", "llm", "knowledge"))
    # quota status
    for row in run(swarm, "quota", "status"):
        assert value("swarmq_quota_used", quota=row["name"]) == row["used"]
        assert value("swarmq_quota_held", quota=row["name"]) == row["held"]
        assert value("swarmq_quota_max", quota=row["name"]) == row["max"]
    assert value("swarmq_quota_used", quota="enrichment") == 2
    assert value("swarmq_quota_refusals_total", quota="enrichment") == 1
    # llm usage (summed over days)
    usage = run(swarm, "llm", "usage")
    calls = sum(v for (n, _), v in got.items() if n == "swarmq_llm_calls_total")
    assert calls == sum(r["attempts"] for r in usage) == 4
    tokens_in = sum(v for (n, _), v in got.items() if n == "swarmq_llm_input_tokens_total")
    assert tokens_in == sum(r["tokens_in"] for r in usage) == 2000
    failed = sum(v for (n, _), v in got.items() if n == "swarmq_llm_failures_total")
    assert failed == sum(r["failed"] for r in usage) == 2
    rejected = sum(v for (n, _), v in got.items() if n == "swarmq_llm_rejected_replies_total")
    assert rejected == sum(r["rejected_replies"] for r in usage) == 1
    labels = {"provider": "openai", "model": "m1", "quota": "enrichment"}
    assert value("swarmq_llm_calls_total", **labels, purpose="curator.enrich") == 4
    assert value("swarmq_llm_cost_dollars_total", provider="openai", model="m1") == pytest.approx(
        (2000 * 3.0 + 400 * 15.0) / 1e6
    )
    assert value("swarmq_llm_daily_budget_dollars") == 5.0
    # the knowledge store itself
    store = knowledge_store(roster, Cluster.connect(roster.cluster_config()).locks)
    entries = store.swarm.read().entries
    by_status: dict[tuple[str, str], int] = {}
    for e in entries:
        by_status[(e.status, e.category)] = by_status.get((e.status, e.category), 0) + 1
    for (status, category), count in by_status.items():
        assert (
            value("swarmq_knowledge_entries", tier="swarm", status=status, category=category)
            == count
        )
    assert value("swarmq_knowledge_added_total", tier="swarm") == len(entries) == 3
    assert value("swarmq_knowledge_injections_total", result="shown") == 1
    assert value("swarmq_knowledge_injections_total", result="silent") == 1
    assert value("swarmq_knowledge_acknowledgements_total", verdict="applied") == 1
    # flywheel status (its recorded lessons and figures)
    flywheel = run(swarm, "flywheel", "status")
    for kind, count in flywheel["recorded_lessons"].items():
        assert value("swarmq_knowledge_recorded_lessons", kind=kind) == count
    assert value("swarmq_knowledge_recorded_lessons", kind="person") == 1
    assert value("swarmq_flywheel_sigma") == flywheel["sigma"]
    assert value("swarmq_flywheel_rho") == flywheel["rho"]
    assert value("swarmq_flywheel_delta_days") == flywheel["delta"]
    assert value("swarmq_flywheel_velocity") == pytest.approx(flywheel["velocity"])
    for tier, count in flywheel["tier_counts"].items():
        assert value("swarmq_flywheel_artifacts", tier=tier) == count
    # deadletter list
    assert value("swarmq_dead_letters_total") == len(run(swarm, "deadletter", "list")) == 1


def test_folds_read_only_what_was_appended_and_restart_on_a_rewrite(swarm: Path) -> None:
    roster = load_roster(swarm)
    reader = FigureReader(roster)
    registry = figure_registry(reader)
    ledger = LLMLedger.in_runtime(roster.runtime_dir)

    def calls() -> float:
        return by_name(reader.llm())["swarmq_llm_calls"].total()

    assert calls() == 0
    record = LedgerRecord("c", 1, "enrichment", "d", "openai", "m1", "ok", True)
    ledger.append(record)
    assert calls() == 1
    with ledger.path.open("ab") as handle:  # a torn last line is folded once it is complete
        handle.write(json.dumps(record.as_json()).encode()[:20])
    assert calls() == 1
    ledger.path.write_text(json.dumps(record.as_json()) + "\n" * 1)  # rewritten: from the start
    ledger.path.write_text("")
    assert calls() == 0
    ledger.append(record)
    ledger.append(record)
    assert calls() == 2
    assert b"swarmq_llm_calls_total" in exposition(registry)


def test_ack_verdicts_are_the_receipt_journals() -> None:
    assert ACK_VERDICTS == OUTCOMES


def test_a_redis_that_does_not_answer_blanks_only_its_sections(tmp_path: Path) -> None:
    from tests.support import write_roster

    path = write_roster(tmp_path, "nored", "redis://127.0.0.1:1/0")
    text = exposition(figure_registry(FigureReader(load_roster(path)))).decode()
    got = samples(text)
    assert got[("swarmq_scrape_error", (("section", "quotas"),))] == 1
    assert got[("swarmq_scrape_error", (("section", "knowledge"),))] == 0
    assert ("swarmq_missions", (("state", "complete"),)) in got
