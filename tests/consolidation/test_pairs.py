"""A round's pairs: only those the structure allows, found incrementally across rounds."""

from __future__ import annotations

import random

import pytest

from bench.lesson_corpus import generate
from swarmq.consolidation._pairs import every_pair, round_pairs
from swarmq.consolidation._plan import Planner
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Action, ActionKind, Item
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


class _Star:
    """A population whose merges keep the survivor's lesson (the strongest entry's)."""

    def __init__(self, items: list[Item]) -> None:
        self.current = {item.id: item for item in items}
        self.gone: set[str] = set()
        self.lookups = 0

    def items(self) -> list[Item]:
        return [item for item in self.current.values() if item.id not in self.gone]

    def item(self, entry_id: str) -> Item:
        self.lookups += 1
        return self.current[entry_id]

    def apply(self, action: Action) -> bool:
        self.gone.add(action.other)
        return True


def _star(spokes: int) -> list[Item]:
    rng = random.Random(7)
    words = [f"w{k}" for k in range(400)]
    hub = " ".join(rng.sample(words, 20))
    items = [Item(id="hub", text=hub, created="2026-01-01", order=0, strength=(1.0,))]
    for k in range(spokes):  # the hub's 19 bigrams and 6 of its own: 0.76 with the hub,
        extra = " ".join(f"s{k}x{n}" for n in range(6))  # 0.61 with another spoke
        items.append(Item(id=f"s{k:02d}", text=f"{hub} {extra}", created="2026-02-01", order=k + 1))
    return items


STAR = ConsolidationConfig(
    duplicate_threshold=0.7,
    conflict_threshold=0.7,
    complement_threshold=0.5,
    paraphrase_threshold=1.0,
    contradictions=False,
    dense_duplicates=False,
    multilingual_duplicates=False,
)


def test_a_star_of_near_duplicates_converges_in_two_rounds() -> None:
    """Eleven spokes duplicate the hub and not each other: the hub, surviving each merge with
    its lesson, absorbs them all in round 1; round 2 finds nothing (one spoke a round before)."""
    items = _star(11)
    sets = encode([item.text for item in items], STAR.measure)
    pairs = similarity_join(sets, STAR.duplicate_threshold)
    assert all(items[int(i)].id == "hub" for i in pairs.left)  # a star: only hub-spoke pairs
    assert len(pairs.left) == 11
    population = _Star(items)
    plan = Planner(STAR, STAR.measure).run(population)
    assert plan.converged and plan.rounds == 2
    merges = [a for a in plan.actions if a.kind is ActionKind.MERGE]
    assert {a.other for a in merges} == {f"s{k:02d}" for k in range(11)}
    assert {a.keep for a in merges} == {"hub"} and {a.round for a in merges} == {1}
    assert [item.id for item in population.items()] == ["hub"]


def test_a_survivor_whose_lesson_changed_waits_for_the_next_round() -> None:
    """A merge that changes the survivor's lesson makes its other pairs stale: it takes no
    further part in that round (the next round compares the new lesson)."""

    class Rewriting(_Star):
        def apply(self, action: Action) -> bool:
            keep = self.current[action.keep]
            self.current[action.keep] = Item(
                id=keep.id,
                text=self.current[action.other].text,  # took the other's lesson
                created=keep.created,
                order=keep.order,
                strength=keep.strength,
            )
            return super().apply(action)

    population = Rewriting(_star(3))
    planner = Planner(STAR, STAR.measure)
    first = planner.decide_round(population.items(), 1, population)
    assert len(first) == 1 and first[0].keep == "hub"


@pytest.mark.parametrize("seed", [51, 52])
def test_paraphrase_candidates_are_the_plain_joins_that_reach_the_cosine(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidate join pairs only prefix tokens that can still reach the cosine: it keeps
    exactly the pairs of the plain self-join at the Jaccard threshold whose IDF cosine reaches
    ``paraphrase_threshold`` (similarities included), and far fewer others."""
    from swarmq.consolidation import _paraphrase
    from swarmq.similarity import join
    from swarmq.similarity.join import idf_weights, weighted_overlaps
    from swarmq.similarity.measure import Measure
    from swarmq.similarity.normalize import term_text

    monkeypatch.setattr(join, "CHUNK", 997)  # many chunks
    lessons = generate(1500, seed=seed, dup_rate=0.05, odd_rate=0.0, dark_rate=0.0).lessons
    texts = sorted(set(lessons))
    sets = encode([term_text(t) for t in texts], Measure.TOKENS)
    weights = idf_weights(sets)
    cosine = CONFIG.paraphrase_threshold

    def strong(left: object, right: object, similarity: object) -> set[tuple[int, int, float]]:
        import numpy as np

        assert isinstance(left, np.ndarray) and isinstance(right, np.ndarray)
        assert isinstance(similarity, np.ndarray)
        keep = weighted_overlaps(sets, left, right, weights) >= cosine
        return set(
            zip(left[keep].tolist(), right[keep].tolist(), similarity[keep].tolist(), strict=True)
        )

    plain = similarity_join(sets, CONFIG.paraphrase_candidate_threshold)
    got = _paraphrase.Paraphrases(CONFIG).join(sets, texts, weights)
    want = strong(plain.left, plain.right, plain.similarity)
    assert len(want) > 20
    assert strong(got.left, got.right, got.similarity) == want
    pairs = list(zip(got.left.tolist(), got.right.tolist(), strict=True))
    assert len(pairs) == len(set(pairs)) and all(i < j for i, j in pairs)
    assert len(got.left) < len(plain.left)


class _Merging(_Star):
    """Merges that keep the longer lesson, as a survivor may take the other's."""

    def apply(self, action: Action) -> bool:
        if action.kind is not ActionKind.LINK:
            keep, other = self.current[action.keep], self.current[action.other]
            if len(other.text) > len(keep.text):
                self.current[keep.id] = Item(
                    id=keep.id, text=other.text, created=keep.created, order=keep.order
                )
            self.gone.add(other.id)
        return True


@pytest.mark.parametrize("seed", [61, 62])
def test_later_rounds_reuse_the_first_encoding_with_the_same_plan(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later round's sets are taken from the last encoding (its lessons are earlier ones):
    the plan is the one a fresh encoding every round gives, round by round."""
    lessons = generate(1200, seed=seed, dup_rate=0.08, odd_rate=0.0, dark_rate=0.0).lessons
    texts = {f"e{k}": t for k, t in enumerate(lessons)}

    def plan(fresh: bool) -> list[Action]:
        planner = Planner(CONFIG, CONFIG.measure)
        if fresh:
            monkeypatch.setattr(planner, "encode", lambda items: encode(
                [i.text for i in items], CONFIG.measure
            ))  # fmt: skip
        population = _Merging(
            [Item(id=i, text=t, created="", order=k) for k, (i, t) in enumerate(texts.items())]
        )
        found = planner.run(population)
        assert found.rounds >= 2  # round 2 and the links reuse it
        return found.actions

    reused = plan(fresh=False)
    assert len(reused) > 50 and reused == plan(fresh=True)
