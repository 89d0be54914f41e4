"""Near-duplicate edge cases; the index always agrees with opencode-swarm's full scan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from swarmq.knowledge.dedup import BigramIndex, find_near_duplicate_scan
from swarmq.knowledge.project import KnowledgeStore

WORDS = ["alpha", "beta", "gamma", "delta", "x", "y", "中文", "ünï", "--", "a_b"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join), max_size=25),
    st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join),
    st.sampled_from([0.0, 0.2, 0.5, 0.6, 0.75, 1.0]),
)
def test_index_matches_the_reference_scan(
    lessons: list[str], candidate: str, threshold: float
) -> None:
    index = BigramIndex()
    for slot, lesson in enumerate(lessons):
        index.add(slot, lesson)
    assert index.find(candidate, threshold) == find_near_duplicate_scan(
        candidate, lessons, threshold
    )


def test_index_stays_exact_through_replace_and_remove() -> None:
    lessons = ["alpha beta gamma", "beta gamma delta", "x y x y", "alpha beta"]
    index = BigramIndex()
    for slot, lesson in enumerate(lessons):
        index.add(slot, lesson)
    index.replace(0, "中文 only")
    index.remove(1)
    live = {0: "中文 only", 2: "x y x y", 3: "alpha beta"}
    for candidate in ["alpha beta gamma", "中文", "x y", "beta gamma delta"]:
        expected = find_near_duplicate_scan(candidate, list(live.values()), 0.6)
        got = index.find(candidate, 0.6)
        assert got == (None if expected is None else list(live)[expected])


def test_store_dedup_edge_cases(knowledge: KnowledgeStore) -> None:
    first = knowledge.add_lesson("在提交之前务必运行全部单元测试以避免回归问题").entry
    assert first is not None
    # a different all-Chinese lesson normalises to no bigrams too: Jaccard 1.0 → duplicate
    other = knowledge.add_lesson("部署之前请检查所有的环境变量是否已经配置好了")
    assert other.outcome == "duplicate" and other.entry is not None and other.entry.id == first.id
    # first match in file order wins; inactive entries are ignored
    a = knowledge.add_lesson("Use the alpha cache layer when reading alpha tables").entry
    b = knowledge.add_lesson("Use the alpha cache layer when reading beta tables now").entry
    assert a is not None and b is not None
    probe = "Use the alpha cache layer when reading alpha tables now"
    assert knowledge.swarm.find_duplicate(probe).id == a.id  # type: ignore[union-attr]
    knowledge.swarm.quarantine(a.id, "stale")
    assert knowledge.swarm.find_duplicate(probe).id == b.id  # type: ignore[union-attr]
    knowledge.swarm.update(b.id, {"status": "archived"})
    assert knowledge.swarm.find_duplicate(probe) is None
    assert knowledge.add_lesson(probe).outcome == "added"  # a fresh candidate instead


def test_threshold_comes_from_config(make_knowledge) -> None:  # type: ignore[no-untyped-def]
    strict = make_knowledge(dedup_threshold=0.95)
    strict.add_lesson("Use the alpha cache layer when reading alpha tables")
    assert (
        strict.add_lesson("Use the alpha cache layer when reading alpha tables now").outcome
        == "added"
    )
