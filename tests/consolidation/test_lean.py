"""The full pass's lean population: the loaded population's items and plan, fewer entries held."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from swarmq.consolidation._lean import LeanPopulation
from swarmq.consolidation._plan import Planner
from swarmq.consolidation._population import KnowledgePopulation
from swarmq.consolidation._watermark import line_digests
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier
from swarmq.knowledge.contradiction import pair_contradicts
from swarmq.knowledge.project import KnowledgeStore
from swarmq.similarity.measure import Measure
from tests.consolidation.support import entries_by_id, entry, write_store

BASE = "Run the database migrations in a transaction before deploying the api service to production"
NEAR = BASE + " now"
CONFLICT = BASE.replace("api", "web")
COMPLEMENT = CONFLICT.replace("production", "staging")
COCHANGE = "Files src/a.py and src/b.py co-change with NPMI=0.{n} (seen in {n} commits)"


def _entries() -> list[dict[str, object]]:
    out = [
        entry("a", BASE, created="2026-01-05T00:00:00.000Z", phases=(1, 2)),
        entry("b", NEAR, created="2026-01-02T00:00:00.000Z", confidence=0.7),
        entry("c", CONFLICT, created="2026-01-07T00:00:00.000Z"),
        entry("d", COMPLEMENT, created="2026-01-08T00:00:00.000Z"),
        entry("e", BASE.upper(), status="promoted"),  # the same normalised text as a
        entry("f", "Always pin the compiler version in the build image", status="archived"),
        entry("g", "Never pin the compiler version in the build image"),
        entry("h", "Always pin the compiler version in the build image", project="q"),
        entry("i", "Cache the dependency downloads between the pipeline runs"),
        entry("i", "a later line with a duplicated id does not count"),
        entry(
            "j",
            "Cache the dependency downloads between pipeline runs",
            consolidation_keep_apart=["i"],
        ),
        entry("k", "短い教訓は日本語で書かれている"),
        entry("l", "短い教訓は日本語で書かれている!"),
    ]
    out += [entry(f"t{n}", COCHANGE.format(n=n % 3)) for n in range(6)]
    return out


def _loaded(store: KnowledgeStore, config: ConsolidationConfig) -> KnowledgePopulation:
    entries = list(store.swarm.read().entries)
    return KnowledgePopulation(
        entries, at="2026-02-01T00:00:00.000Z", run_id="r", store=store.swarm, config=config
    )


def _lean(store: KnowledgeStore, config: ConsolidationConfig) -> LeanPopulation:
    return LeanPopulation(store.swarm, at="2026-02-01T00:00:00.000Z", run_id="r", config=config)


def _corrupted(tmp_path: Path) -> Path:
    """The store with a BOM, a blank line, a corrupt line and an unterminated corrupt tail."""
    path = tmp_path / ".swarm" / "knowledge.jsonl"
    lines = path.read_bytes().split(b"\n")
    body = b"\xef\xbb\xbf" + lines[0] + b"\n\n{not json\n" + b"\n".join(lines[1:]) + b'{"id": "half'
    path.write_bytes(body)
    return path


def test_the_lean_items_are_the_loaded_items(tmp_path: Path) -> None:
    store = write_store(tmp_path, _entries())
    _corrupted(tmp_path)
    config = ConsolidationConfig()
    loaded = _loaded(store, config)
    with _lean(store, config) as lean:
        assert lean.items() == loaded.items()
        assert lean.total == len(store.swarm.read().entries)
        assert lean.read == {}  # nothing parsed beyond the scan until an action asks


def test_the_lean_plan_is_the_loaded_plan_and_reads_only_what_it_touches(tmp_path: Path) -> None:
    store = write_store(tmp_path, _entries())
    _corrupted(tmp_path)
    config = ConsolidationConfig()
    contradicts = functools.partial(pair_contradicts, mode=config.contradiction_mode)

    def planner() -> Planner:
        return Planner(config, Measure.BIGRAMS, contradicts)

    loaded = _loaded(store, config)
    expected = planner().run(loaded)
    with _lean(store, config) as lean:
        plan = planner().run(lean)
        assert plan.actions == expected.actions
        assert [a.scores for a in plan.actions] == [a.scores for a in expected.actions]
        assert plan.rounds == expected.rounds and plan.actions
        assert lean.changed == loaded.changed
        touched = {i for a in plan.actions for i in (a.keep, a.other)}
        assert set(lean.read) == touched
        assert lean.items() == loaded.items()


def test_fresh_lines_are_the_watermarks_changed_entries(tmp_path: Path) -> None:
    store = write_store(tmp_path, _entries())
    entries = list(store.swarm.read().entries)
    known = line_digests(e.line() for e in entries[3:])
    lean = LeanPopulation(
        store.swarm, at="x", run_id="r", config=ConsolidationConfig(), known=known
    )
    lean.close()
    assert lean.fresh == {e.id for e in entries[:3]}


def test_a_committed_full_pass_writes_what_the_plan_says(tmp_path: Path) -> None:
    store = write_store(tmp_path, _entries())
    before = entries_by_id(store)
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm", full=True)
    after = entries_by_id(store)
    touched = {i for a in report.plan.actions for i in (a.keep, a.other)}
    assert touched and report.changed == len(touched)
    assert {i for i in after if after[i] != before[i]} == touched
    log = tmp_path / ".swarm" / "knowledge-consolidation.jsonl"
    changed = [json.loads(line) for line in log.read_text().splitlines()]
    records = {r["id"]: r for r in changed if r["type"] == "entry_changed"}
    assert set(records) == touched
    for entry_id, record in records.items():
        assert json.loads(record["before"]) == before[entry_id]
        assert json.loads(record["after"]) == after[entry_id]
    again = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm", full=True)
    assert not again.plan.changes


def test_a_store_not_written_yet_consolidates_to_nothing(tmp_path: Path) -> None:
    store = write_store(tmp_path, [])
    (tmp_path / ".swarm" / "knowledge.jsonl").unlink()
    for full in (True, False):
        report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm", full=full)
        assert not report.plan.changes and report.entries == 0
    assert (tmp_path / ".swarm" / "knowledge-consolidation.watermark").exists()
