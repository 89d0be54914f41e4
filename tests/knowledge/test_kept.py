"""The answers a process keeps for a version of an index: bounded, least recently used out."""

from __future__ import annotations

import os
import threading

import pytest

from swarmq.knowledge import _ftsindex, _vecindex
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


_made_here: Kept[int] = Kept(10)


@pytest.mark.parametrize(
    "kept",
    [
        _made_here,
        _ftsindex._postings,
        _ftsindex._trigger_rows,
        _ftsindex._counts,
        _vecindex._maps,
        _vecindex._answers,
    ],
    ids=["any", "postings", "triggers", "counts", "row maps", "dense answers"],
)
def test_a_forked_child_uses_a_kept_table_a_parent_thread_held(kept: Kept[object]) -> None:
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with kept._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        pid = os.fork()
        if pid == 0:
            try:
                if not kept._lock.acquire(timeout=5):
                    os._exit(2)
                kept._lock.release()
                kept.put(("k",), 1, 1)
                os._exit(0 if kept.get(("k",)) == 1 else 3)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        holder.join()
    assert os.waitstatus_to_exitcode(status) == 0


def test_at_most_most_answers_are_kept_whatever_their_size() -> None:
    kept: Kept[str] = Kept(1000, most=2)
    kept.put(("v1", "a"), "a", 1)
    kept.put(("v1", "b"), "b", 1)
    assert kept.get(("v1", "a")) == "a"  # now the most recently used
    kept.put(("v1", "c"), "c", 1)  # a third: the least recently used ("b") goes
    assert len(kept) == 2 and kept.get(("v1", "b")) is None
    assert (kept.get(("v1", "a")), kept.get(("v1", "c"))) == ("a", "c")
    kept.put(("v1", "c"), "C", 1)  # asked again: replaced, nothing else dropped
    assert len(kept) == 2 and kept.get(("v1", "a")) == "a"


def test_the_dense_answers_kept_are_the_last_few_texts() -> None:
    """A resident server keeps the answers asked again (a search, then its injection), not
    the ~100 of a 100k store's slot budget (issue 28: ~22 MB of its 300 MB)."""
    assert _vecindex._answers.most == _vecindex.DENSE_ANSWERS == 16
    assert _vecindex._answers.budget == _vecindex.DENSE_ANSWER_SLOTS
