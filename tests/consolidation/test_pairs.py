"""A round's pairs: only those the structure allows, found incrementally across rounds."""

from __future__ import annotations

import random

import pytest

from bench.lesson_corpus import generate
from swarmq.consolidation._pairs import every_pair, round_pairs
from swarmq.consolidation._plan import Planner
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Item
from swarmq.knowledge.templates import template_key
from swarmq.similarity.join import similarity_join
from swarmq.similarity.sets import TokenSets, encode

CONFIG = ConsolidationConfig()


def _items(texts: dict[str, str]) -> list[Item]:
    return [
        Item(id=i, text=t, created="", order=k, template=template_key(t))
        for k, (i, t) in enumerate(texts.items())
    ]


def _comparable_full_join(
    sets: TokenSets, threshold: float, items: list[Item]
) -> set[tuple[int, int, float]]:
    full = similarity_join(sets, threshold)
    return {
        (i, j, s)
        for i, j, s in zip(
            full.left.tolist(), full.right.tolist(), full.similarity.tolist(), strict=True
        )
        if items[i].template == items[j].template
    }


@pytest.mark.parametrize("seed", [31, 32])
def test_cross_template_pairs_are_never_proposed(seed: int) -> None:
    """Co-change notes of different fields share most of their wording: the full join pairs
    them, the planner never sees those pairs, and loses none it may act on."""
    lessons = generate(800, seed=seed, dup_rate=0.02, odd_rate=0.0, dark_rate=0.1).lessons
    items = _items({f"e{k}": t for k, t in enumerate(lessons)})
    assert sum(item.template is not None for item in items) > 50
    sets = encode([item.text for item in items], CONFIG.measure)
    t = CONFIG.complement_threshold
    full = similarity_join(sets, t)
    crossing = sum(
        items[i].template != items[j].template
        for i, j in zip(full.left.tolist(), full.right.tolist(), strict=True)
    )
    assert crossing > 100  # the clique the structure refuses
    left, right, similarity = every_pair(sets, t, items)
    got = set(zip(left.tolist(), right.tolist(), similarity.tolist(), strict=True))
    assert all(items[i].template == items[j].template for i, j, _ in got)
    assert got == _comparable_full_join(sets, t, items)
    planner = Planner(CONFIG, CONFIG.measure)
    assert set(planner.round_pairs(sets, t, items)) == got


@pytest.mark.parametrize("seed", [41, 42, 43])
def test_incremental_pairs_equal_a_fresh_full_pair_search(seed: int) -> None:
    """Rounds where entries are merged away and survivors change lesson: each round's pairs,
    joined only for what changed, are a fresh search's (similarity included)."""
    rng = random.Random(seed)
    base = generate(900, seed=seed, dup_rate=0.02, odd_rate=0.0, dark_rate=0.1).lessons
    pool = base + [base[rng.randrange(len(base))] + " again" for _ in range(150)]
    texts = {f"e{k}": t for k, t in enumerate(pool[:800])}
    found = 0
    for threshold in (CONFIG.complement_threshold, CONFIG.conflict_threshold):
        previous = None
        for _ in range(6):
            items = _items(texts)
            sets = encode([item.text for item in items], CONFIG.measure)
            got, previous = round_pairs(previous, sets, threshold, items)
            fresh, _ = round_pairs(None, sets, threshold, items)
            assert len(got) == len(set(got))
            assert set(got) == set(fresh) == _comparable_full_join(sets, threshold, items)
            found += len(got)
            for gone in rng.sample(sorted(texts), 20):  # merged away or archived
                del texts[gone]
            for changed in rng.sample(sorted(texts), 15):  # a survivor took the other's lesson
                texts[changed] = pool[rng.randrange(len(pool))]
    assert found > 200
