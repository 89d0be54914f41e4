"""Query ranking, budget regimes, the directive block and the closed shown/confirmed loop."""

from __future__ import annotations

import json

import pytest

from swarmq.knowledge._sidecars import values
from swarmq.knowledge.acks import acknowledge
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.inject import inject, ledger
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.knowledge.render import budget_for
from swarmq.wiring.knowledge import knowledge_store

CRITICAL = NewLesson(
    "Call declare_scope before delegating source edits to the coder agent",
    confidence=0.9,
    directives={
        "triggers": ["coder delegation"],
        "required_actions": ["call declare_scope"],
        "applies_to_agents": ["coder"],
        "directive_priority": "critical",
    },
)


@pytest.mark.parametrize(
    ("headroom", "regime", "count", "chars"),
    [
        (0.9, "full", 5, 2000),
        (0.61, "full", 5, 2000),
        (0.6, "half", 2, 1000),
        (0.2, "half", 2, 1000),
        (0.19, "quarter", 1, 500),
        (0.05, "quarter", 1, 500),
        (0.049, "skipped", 0, 0),
    ],
)
def test_budget_regimes(headroom: float, regime: str, count: int, chars: int) -> None:
    budget = budget_for(headroom, KnowledgeConfig())
    assert (budget.regime, budget.max_entries, budget.max_chars) == (regime, count, chars)


def seed(knowledge: KnowledgeStore) -> None:
    for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"):
        knowledge.add_lesson(f"Use the {word} cache layer when reading {word} tables in sql")
    knowledge.swarm.add(CRITICAL)


def test_critical_directive_matching_the_agent_is_forced_first(knowledge: KnowledgeStore) -> None:
    seed(knowledge)
    results = search(knowledge, QueryContext(text="read the bravo tables", agent="architect"))
    assert results[0].entry.lesson.startswith("Use the bravo")  # text match ranks first
    assert not results[0].forced
    results = search(knowledge, QueryContext(text="prepare coder delegation", agent="coder"))
    assert results[0].forced and results[0].entry.priority == "critical"
    breakdown = results[0].breakdown
    assert {"trigger", "agent", "confidence", "final"} <= set(breakdown)
    assert breakdown["final"] == pytest.approx(results[0].score)


def test_scope_filter_and_inactive_entries_are_excluded(knowledge: KnowledgeStore) -> None:
    seed(knowledge)
    stack = knowledge.swarm.add(
        NewLesson("Use uv to install the python deps in this stack", scope="stack:python")
    ).entry
    assert stack is not None
    first = search(knowledge, QueryContext(text="alpha"))[0].entry
    knowledge.swarm.quarantine(first.id, "bad")
    ids = {r.entry.id for r in search(knowledge, QueryContext(text="alpha python"), limit=20)}
    assert first.id not in ids and stack.id not in ids
    ids = {
        r.entry.id for r in search(knowledge, QueryContext(text="python", scopes=["stack:python"]))
    }
    assert ids == {stack.id}


def test_hive_near_duplicates_of_swarm_entries_are_dropped(knowledge: KnowledgeStore) -> None:
    knowledge.add_lesson("Use the alpha cache layer when reading alpha tables in sql")
    knowledge.hive.add(NewLesson("Use the alpha cache layer when reading alpha tables in sql!"))
    knowledge.hive.add(NewLesson("Pin every docker base image by digest in production"))
    results = search(knowledge, QueryContext(text="alpha docker"))
    assert sorted(r.tier for r in results) == ["hive", "swarm"]


def test_block_respects_the_character_budget(make_knowledge) -> None:  # type: ignore[no-untyped-def]
    knowledge = make_knowledge(inject_char_budget=600, max_lesson_display_chars=30)
    seed(knowledge)
    injection = inject(knowledge, QueryContext(text="coder delegation", agent="coder"))
    assert injection.block is not None and len(injection.block) <= 600
    lines = injection.block.splitlines()
    assert (
        lines[0] == "<swarm_knowledge_directives>" and lines[-1] == "</swarm_knowledge_directives>"
    )
    assert lines[1] == f"trace_id: {injection.trace_id}"
    assert 0 < len(injection.shown) < 5
    assert all(len(line) < 60 for line in lines if line.startswith("  lesson: "))
    assert sum(line.startswith("- id: ") for line in lines) == len(injection.shown)


def test_shown_entries_are_counted_and_committed_but_not_confirmed(
    knowledge: KnowledgeStore,
) -> None:
    seed(knowledge)
    injection = inject(knowledge, QueryContext(text="bravo tables", phase=4), session_id="s1")
    assert injection.shown
    for ranked in injection.shown:
        entry = knowledge.swarm.get(ranked.entry.id)
        assert entry is not None
        assert entry.counter("shown_count") == 1
        assert 4 not in entry.phase_numbers()  # shown is not confirmed
    state = ledger(knowledge).verify()
    assert state.traces[injection.trace_id]["entry_ids"] == [r.entry.id for r in injection.shown]
    events = values(knowledge.swarm.files.events)
    assert events[-1]["type"] == "retrieved" and events[-1]["trace_id"] == injection.trace_id
    # applying it confirms it in the trace's phase, once per phase
    first = injection.shown[0].entry.id
    acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{injection.trace_id}:{first}")
    again = inject(knowledge, QueryContext(text="bravo tables", phase=4))
    acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{again.trace_id}:{first}")
    entry = knowledge.swarm.get(first)
    assert entry is not None and entry.counter("shown_count") == 2
    assert [r["phase_number"] for r in entry.confirmed_by].count(4) == 1
    assert entry.counter("applied_explicit_count") == 2


def test_low_headroom_skips_and_logs(knowledge: KnowledgeStore) -> None:
    seed(knowledge)
    injection = inject(knowledge, QueryContext(text="bravo"), headroom=0.01)
    assert injection.block is None and injection.budget.regime == "skipped"
    assert values(knowledge.swarm.files.events)[-1]["type"] == "injection_skip"
    assert not knowledge.receipts_path.exists()
    assert (
        json.loads(knowledge.swarm.files.events.read_text().splitlines()[-1])["schema_version"] == 1
    )


def test_directives_block_for_prompt_builders(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from swarmq.knowledge.directives import directives_block
    from swarmq.roster.loader import load_roster
    from swarmq.storage.locking import LocalLocks
    from tests.support import write_roster

    roster = load_roster(write_roster(tmp_path, "kb", "redis://127.0.0.1:6379/15"), env={})
    knowledge = knowledge_store(roster, LocalLocks(tmp_path / "locks"))
    seed(knowledge)
    preview = directives_block(knowledge, "bravo tables", 700, preview=True)
    assert preview.startswith("<swarm_knowledge_directives>") and len(preview) <= 700
    assert not knowledge.receipts_path.exists()  # no locks given: a read-only preview
    recorded = directives_block(knowledge, "bravo tables", 700, phase=2)
    assert recorded.startswith("<swarm_knowledge_directives>")
    assert ledger(knowledge).verify().seq == 1
    assert directives_block(knowledge, "bravo tables", 10) == ""


def test_prepared_directives_write_nothing_until_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A mission shows the block before its agent starts and records it after: the build is a
    pure read, and the later record is what inject() would have written."""
    from swarmq.knowledge.directives import prepare_directives
    from swarmq.roster.loader import load_roster
    from swarmq.storage.locking import LocalLocks
    from tests.support import write_roster

    roster = load_roster(write_roster(tmp_path, "kb", "redis://127.0.0.1:6379/15"), env={})
    locks = LocalLocks(tmp_path / "locks")
    knowledge = knowledge_store(roster, locks)
    seed(knowledge)
    events = knowledge.swarm.files.events
    events_before = events.read_bytes() if events.exists() else None
    prepared = prepare_directives(knowledge, "bravo tables", 700, phase=2, agent="coder")
    assert prepared.block.startswith("<swarm_knowledge_directives>")
    assert not knowledge.receipts_path.exists()
    assert (events.read_bytes() if events.exists() else None) == events_before
    shown = [e.id for e in knowledge.swarm.read().entries if e.counter("shown_count")]
    assert shown == []
    injection = prepared.record()
    assert injection.trace_id in prepared.block
    assert ledger(knowledge).verify().traces[injection.trace_id]["entry_ids"] == [
        r.entry.id for r in injection.shown
    ]
    for ranked in injection.shown:
        entry = knowledge.swarm.get(ranked.entry.id)
        assert entry is not None and entry.counter("shown_count") == 1
    assert values(knowledge.swarm.files.events)[-1]["type"] == "retrieved"
    nothing = prepare_directives(knowledge, "zzzz qqqq", 700)
    assert nothing.block == ""
    nothing.record()
    assert values(knowledge.swarm.files.events)[-1]["type"] == "no_relevant"


def test_shown_hive_entries_are_counted_and_applied_ones_confirmed(
    knowledge: KnowledgeStore,
) -> None:
    entry = knowledge.hive.add(
        NewLesson("Pin every docker base image by digest in production")
    ).entry
    assert entry is not None
    knowledge.hive.update(entry.id, {"source_project": "elsewhere"})
    traces = [
        inject(knowledge, QueryContext(text="docker base image digest", phase=3)).trace_id
        for _ in range(2)
    ]
    hive = knowledge.hive.get(entry.id)
    assert hive is not None and hive.counter("shown_count") == 2 and hive.confirmed_by == []
    for trace in traces:
        acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{trace}:{entry.id}")
    hive = knowledge.hive.get(entry.id)
    assert hive is not None
    assert hive.confirmed_by == [
        {"project_name": "proj", "confirmed_at": "2026-05-01T12:00:00.000Z"}
    ]
    assert hive.encounter_score == pytest.approx(1.05)  # one cross-project encounter
