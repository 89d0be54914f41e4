"""The injection floor: nothing injected when nothing is relevant, normalised matching, and
critical directives still forced in."""

from __future__ import annotations

from collections.abc import Callable

from swarmq.knowledge._sidecars import values
from swarmq.knowledge.inject import inject
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.similarity.normalize import terms
from tests.knowledge.test_inject import CRITICAL

LESSONS = (
    "Wrap every localStorage access in try/catch: Safari private mode throws on write",
    "Use vi.stubEnv for import.meta.env values in Vitest, not vi.stubGlobal",
    "Regenerate the database types after each Supabase migration",
    "Set max_size on websockets.serve() to bound memory per client message",
    "Free ONNX sessions in dispose() before dropping the JS reference",
)


def seeded(make: Callable[..., KnowledgeStore], **config: object) -> KnowledgeStore:
    knowledge = make(**config)
    for lesson in LESSONS:
        assert knowledge.add_lesson(lesson).outcome == "added"
    return knowledge


def test_nothing_relevant_injects_nothing_and_logs_no_relevant(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = seeded(make_knowledge)
    injection = inject(
        knowledge, QueryContext(text="Compose a sonnet about autumn leaves", phase=2)
    )
    assert injection.block is None and injection.shown == []
    events = [v for v in values(knowledge.swarm.files.events) if v.get("type") == "no_relevant"]
    assert len(events) == 1 and events[0]["trace_id"] == injection.trace_id
    # the old behaviour (fill the budget with the best static entries) is a floor of 0
    filled = inject(
        make_knowledge(inject_min_relevance=0.0, lexical_min_relevance=0.0),  # floor 0
        QueryContext(text="Compose a sonnet about autumn leaves"),
        record=False,
    )
    assert len(filled.shown) == 5


def test_identifiers_and_stems_match(make_knowledge: Callable[..., KnowledgeStore]) -> None:
    knowledge = seeded(make_knowledge)
    assert terms("mockEnv sql.init.mode validates v0.2.83") == [
        "mockenv",
        "mock",
        "env",
        "sql",
        "init",
        "mode",
        "valid",
        "v0.2.83",
    ]
    found = search(
        knowledge, QueryContext(text="Mock the env values with stubEnv in a vitest test")
    )
    assert found and found[0].entry.lesson.startswith("Use vi.stubEnv")
    assert found[0].breakdown["relevance"] >= knowledge.config.inject_min_relevance
    found = search(knowledge, QueryContext(text="regenerating types after migrations"))
    assert [r.entry.lesson[:14] for r in found] == ["Regenerate the"]


def test_a_matching_critical_directive_is_forced_in_below_the_floor(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = seeded(make_knowledge)
    knowledge.swarm.add(CRITICAL)
    results = search(knowledge, QueryContext(text="prepare coder delegation", agent="coder"))
    assert results[0].forced and results[0].entry.priority == "critical"
    assert (
        search(knowledge, QueryContext(text="prepare the release notes", agent="architect")) == []
    )


def test_a_store_wide_query_still_ranks_by_relevance(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = seeded(make_knowledge)
    knowledge.add_lesson("Persist the theme choice in localStorage under one key")
    found = search(
        knowledge, QueryContext(text="Persist the user's theme preference in localStorage")
    )
    assert found[0].entry.lesson.startswith("Persist the theme")
    # every other result is relevant too, by its words or (hybrid) by its meaning: with the
    # default model, MiniLM, the lesson on wrapping localStorage is near the task in meaning
    floor = knowledge.config.dense_floor
    assert all(
        r.breakdown["relevance"] >= 0.32 or r.breakdown.get("cosine", -1.0) >= floor for r in found
    ), [(r.entry.lesson[:40], r.breakdown) for r in found]
