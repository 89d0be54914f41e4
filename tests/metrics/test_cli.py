"""``swarmq top`` prints what the stores hold as plain text; ``swarmq metrics --once`` prints a
scrape; ``swarmq up --metrics`` knows the exporter's process; a store re-read that takes longer
than the scrape may wait shows the previous figures and says so."""

from __future__ import annotations

import os
import time
from pathlib import Path

import yaml
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from swarmq.cli import app as cli
from swarmq.knowledge.files import TierFiles
from swarmq.llm.ledger import LedgerRecord, LLMLedger
from swarmq.roster.loader import load_roster
from swarmq.workers.launcher import Supervisor
from swarmq.workers.processes import Kind


def test_top_prints_store_text_as_plain_text(roster_file: Path) -> None:
    roster = load_roster(roster_file)
    LLMLedger.in_runtime(roster.runtime_dir).append(
        LedgerRecord("c", 1, "enrichment", "d", "openai", "[red]m1[/red]", "ok", True, tokens_in=5)
    )
    done = CliRunner().invoke(cli, ["--config", str(roster_file), "top", "--once"])
    assert done.exit_code == 0, done.output
    assert "openai/[red]m1[/red]/enrichment/none" in done.output
    for title in ("quotas", "LLM (est. cost", "knowledge", "flywheel", "missions and workers"):
        assert title in done.output


def test_metrics_once_prints_one_scrape(roster_file: Path) -> None:
    done = CliRunner().invoke(cli, ["--config", str(roster_file), "metrics", "--once"])
    assert done.exit_code == 0, done.output
    names = {f.name for f in text_string_to_metric_families(done.output)}
    assert {"swarmq_quota_used", "swarmq_knowledge_entries", "swarmq_missions"} <= names


def test_up_metrics_starts_the_exporter(roster_file: Path) -> None:
    roster = load_roster(roster_file)
    supervisor = Supervisor(roster, roster_file, use_tmux=False)
    assert not [s for s in supervisor.specs() if s.kind is Kind.METRICS]
    (spec,) = [s for s in supervisor.specs(metrics=True) if s.kind is Kind.METRICS]
    assert spec.argv[-1] == "metrics" and str(roster_file.resolve()) in spec.argv
    assert spec in supervisor.known_specs()  # so `swarmq down` stops it


def test_a_slow_store_reread_shows_the_previous_figures(roster_file: Path) -> None:
    from swarmq.wiring.figures import FigureReader

    data = yaml.safe_load(roster_file.read_text())
    data["metrics"] = {"store_wait_seconds": 0}
    roster_file.write_text(yaml.safe_dump(data))
    roster = load_roster(roster_file)
    for lesson in ("Run the lease tests before pushing lock code", "Pin every dependency"):
        done = CliRunner().invoke(
            cli, ["--config", str(roster_file), "knowledge", "add", "--plain", lesson]
        )
        assert done.exit_code == 0, done.output
    reader = FigureReader(roster)
    first, stale = reader.store_summary("swarm")
    assert first.entries == 2 and not stale  # the first read is always waited for
    path = TierFiles.swarm(roster.swarm_dir).knowledge
    lines = path.read_bytes().splitlines(keepends=True)
    temp = path.with_suffix(".tmp")
    temp.write_bytes(lines[0])  # rewritten (another inode): one entry left
    os.replace(temp, path)
    deadline = time.monotonic() + 10
    seen = []
    while time.monotonic() < deadline:
        summary, stale = reader.store_summary("swarm")
        seen.append((summary.entries, stale))
        if not stale and summary.entries == 1:
            break
        assert summary.entries == 2 and stale  # the previous figures, said to be so
        time.sleep(0.01)
    assert seen[-1] == (1, False)


def test_a_rewrite_folds_as_a_difference_and_agrees_with_a_fresh_read(tmp_path: Path) -> None:
    import json

    from swarmq.wiring.figures import _read_store, _StoreView

    def line(n: int, status: str = "candidate", category: str = "process") -> str:
        entry = {"id": f"e{n}", "lesson": f"lesson {n}", "status": status, "category": category}
        return json.dumps(entry) + "\n"

    path = tmp_path / "knowledge.jsonl"

    def rewrite(text: str) -> None:
        temp = tmp_path / "tmp"
        temp.write_text(text)
        os.replace(temp, path)

    rewrite("".join(line(n) for n in range(50)) + "not json\n")
    view = _read_store(path, _StoreView())
    steps = [
        "".join(line(n, "established" if n < 5 else "candidate") for n in range(50)),
        "".join(line(n) for n in range(10, 60)) + "\n",
        "".join(line(n, category="testing") for n in range(10, 60)) + line(10, "archived"),
        "".join(line(n) for n in range(3)),
    ]
    for text in steps:
        rewrite(text)
        view = _read_store(path, view)
        fresh = _read_store(path, _StoreView())
        assert view.summary == fresh.summary, text[:80]
    with path.open("a") as handle:  # an append, then a rewrite
        handle.write(line(7, "promoted"))
    view = _read_store(path, view)
    rewrite("".join(line(n) for n in range(3)) + line(7, "promoted"))
    view = _read_store(path, view)
    assert view.summary == _read_store(path, _StoreView()).summary
    assert view.summary is not None and view.summary.entries == 4
