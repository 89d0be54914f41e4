"""The answers a process keeps for a version of an index: bounded, least recently used out."""

from __future__ import annotations

from swarmq.knowledge._kept import Kept


def test_the_least_recently_used_answers_go_once_the_budget_is_held() -> None:
    kept: Kept[str] = Kept(10)
    kept.put(("v1", "a"), "a", 4)
    kept.put(("v1", "b"), "b", 4)
    assert kept.get(("v1", "a")) == "a"  # now the most recently used
    kept.put(("v1", "c"), "c", 4)  # 12 > 10: the least recently used ("b") goes
    assert kept.get(("v1", "b")) is None
    assert (kept.get(("v1", "a")), kept.get(("v1", "c"))) == ("a", "c")
    assert kept.get(("v2", "a")) is None  # another version's question


def test_an_empty_answer_counts_and_one_over_the_budget_is_not_kept() -> None:
    kept: Kept[tuple[int, ...]] = Kept(3)
    for word in "abcd":
        kept.put(("v1", word), (), 0)
    assert len(kept) == 3 and kept.get(("v1", "a")) is None
    assert kept.get(("v1", "d")) == ()
    kept.put(("v1", "big"), (1, 2, 3, 4), 4)
    assert kept.get(("v1", "big")) is None and len(kept) == 3
    kept.put(("v1", "d"), (1,), 1)  # asked again: replaced, not counted twice
    kept.put(("v1", "e"), (2,), 1)
    assert len(kept) == 3 and kept.get(("v1", "d")) == (1,)
    kept.clear()
    assert len(kept) == 0
