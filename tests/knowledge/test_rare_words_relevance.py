"""Injection weighs a task's words by how rare they are among the workspace's learnings and
patterns (issue 26): of two learnings holding as many of the task's words, the one holding its
rare words ("legacy", "inventory") is what the task wants, not the one holding the words every
learning of the project holds ("stage", "plan"). Word share alone cannot tell them apart; the
learned relevance's rarity-weighted share can, and the shipped model weighs it (fitted leaving
one workspace out: docs/QUALITY.md, "Issue 26: reach misses left one workspace out, by cause").
Real files; every cosine is fixed, so only the words decide."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from swarmq.federated.meaning import LEARNED, WORDLLAMA
from swarmq.flywheel.lookup import rare_share, rarity, search, words
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.flywheel.store import AgentsLayout

TASK = "Stage 1 legacy inventory plan"
OWNERS = ("alice", "bob", "carol", "dave", "erin", "frank")
"""One learning each of the project's every stage: each holds "stage" and "plan"."""
FILLERS = len(OWNERS)


def learning(ident: str, title: str, body: str) -> str:
    return (
        f"---\nid: {ident}\ntype: learning\nmaturity: established\nutility: 0.5\n---\n"
        f"# Learning: {title}\n\n{body}\n"
    )


def workspace(root: Path) -> AgentsLayout:
    learnings = root / ".agents" / "learnings"
    learnings.mkdir(parents=True)
    files = {
        "common.md": learning("common", "Ordering", "Each stage plan lists its steps in order."),
        "rare.md": learning("rare", "Old records", "The legacy inventory tables keep old rows."),
    }
    for n, owner in enumerate(OWNERS):
        files[f"filler{n}.md"] = learning(
            f"filler{n}", f"Notes of {owner}", f"A stage plan names {owner} as its owner."
        )
    for name, text in files.items():
        (learnings / name).write_text(text, encoding="utf-8")
    return AgentsLayout(root / ".agents")


def far(texts: Sequence[str]) -> list[float]:
    return [0.05] * len(texts)


def share(text: str) -> float:
    wanted = words(TASK)
    return len(wanted & words(text)) / len(wanted)


def test_a_word_every_record_holds_weighs_least() -> None:
    wanted = {"stage", "legacy"}
    corpus = [frozenset({"stage"}), frozenset({"stage", "legacy"}), frozenset({"stage"})]
    weights = rarity(wanted, corpus)
    assert weights["stage"] == pytest.approx(1.0)  # every record: ln(4/4) = 0
    assert weights["legacy"] == pytest.approx(1.0 + math.log(4 / 2))
    assert rare_share(weights, frozenset({"legacy"})) > rare_share(weights, frozenset({"stage"}))
    assert rare_share(weights, frozenset({"stage", "legacy", "other"})) == pytest.approx(1.0)
    assert rare_share({}, frozenset({"stage"})) == 0.0


def test_the_premise_both_hold_the_same_share() -> None:
    assert share("Each stage plan lists its steps in order.") == share(
        "The legacy inventory tables keep old rows."
    )


def test_the_learning_holding_the_rare_words_is_injected(tmp_path: Path) -> None:
    layout = workspace(tmp_path)
    model = LearnedRelevance(intercept=-2.5, share=2.0, cosine=0.0, title=0.0, floor=0.5, rare=4.0)
    hits = search(layout, TASK, cosines=far, min_cosine=0.4, learned=model)
    assert [h.id for h in hits] == ["rare"]  # the common one and the fillers stay out
    without = LearnedRelevance(-3.0, 2.0, 0.0, 0.0, 0.0)
    both = search(layout, TASK, cosines=far, min_cosine=0.4, learned=without, limit=20)
    chance = {h.id: h.relevance for h in both}
    assert chance["rare"] == chance["common"]  # by plain share they cannot be told apart


def test_a_search_without_the_learned_relevance_is_unchanged(tmp_path: Path) -> None:
    layout = workspace(tmp_path)
    hits = search(layout, TASK, min_relevance=0.4, limit=20)
    assert {h.id for h in hits} == {"common", "rare"} | {f"filler{n}" for n in range(FILLERS)}
    assert len({h.relevance for h in hits}) == 1


def test_the_shipped_model_weighs_rare_words() -> None:
    assert LEARNED[WORDLLAMA].rare > 0.0


def test_the_rarity_weighted_share_does_not_depend_on_the_words_order() -> None:
    """The task's words come from a set: its order, and a plain sum's last bit, change with each
    process's string hashing; summed plainly, these weights' shares differ in the last bit."""
    from swarmq.flywheel.lookup import rare_share

    forward = {"a": 1.093, "b": 3.597, "c": 2.418, "d": 3.156, "e": 3.636}
    backward = dict(reversed(list(forward.items())))
    found = frozenset({"a", "b", "c", "d"})
    assert rare_share(forward, found) == rare_share(backward, found)
    assert rare_share(forward, frozenset(forward)) == 1.0
