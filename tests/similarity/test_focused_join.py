"""The focused join returns exactly the full join's pairs that touch the focus."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.lesson_corpus import generate
from swarmq.similarity.join import (
    FocusedJoin,
    JoinResult,
    cosine_prefix,
    focused_join,
    idf_weights,
    similarity_join,
    weighted_overlaps,
)
from swarmq.similarity.measure import Measure
from swarmq.similarity.sets import encode


def _pairs(result: JoinResult) -> set[tuple[int, int, float]]:
    return set(
        zip(result.left.tolist(), result.right.tolist(), result.similarity.tolist(), strict=True)
    )


def _check(texts: list[str], focus: list[int], threshold: float, measure: Measure) -> None:
    sets = encode(texts, measure)
    full = similarity_join(sets, threshold)
    chosen = set(focus)
    expected = {p for p in _pairs(full) if p[0] in chosen or p[1] in chosen}
    got = focused_join(sets, np.asarray(focus, dtype=np.int64), threshold)
    assert _pairs(got) == expected
    empty = set(full.empty.tolist())
    assert set(got.empty.tolist()) == (empty if empty & chosen else set())


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("measure", list(Measure))
def test_generated_stores(seed: int, measure: Measure) -> None:
    texts = generate(2000, seed=seed, dup_rate=0.05, dark_rate=0.02).lessons
    rng = random.Random(seed)
    focus = rng.sample(range(len(texts)), 30)
    for threshold in (0.3, 0.5, 0.7, 0.85):
        _check(texts, focus, threshold, measure)


WORDS = ["use", "the", "cache", "never", "run", "tests", "api", "node", "x", "config", "42"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join),
        min_size=1,
        max_size=25,
    ),
    data=st.data(),
    threshold=st.sampled_from([0.1, 1 / 3, 0.5, 2 / 3, 0.85, 1.0]),
    measure=st.sampled_from(list(Measure)),
)
def test_random_small_inputs(
    texts: list[str], data: st.DataObject, threshold: float, measure: Measure
) -> None:
    focus = data.draw(st.lists(st.integers(0, len(texts) - 1), max_size=len(texts)))
    _check(texts, focus, threshold, measure)


def test_whole_focus_is_the_full_join() -> None:
    texts = generate(500, seed=9).lessons
    sets = encode(texts, Measure.BIGRAMS)
    full = similarity_join(sets, 0.5)
    got = focused_join(sets, np.arange(len(texts)), 0.5)
    assert _pairs(got) == _pairs(full)


def test_bad_focus_is_refused() -> None:
    sets = encode(["a b c", "a b d"], Measure.BIGRAMS)
    with pytest.raises(ValueError, match="focus indices"):
        focused_join(sets, np.asarray([2]), 0.5)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_cosine_prefix_keeps_every_pair_meeting_both_thresholds(seed: int) -> None:
    """The paraphrase candidates of the indexed night: Jaccard >= 0.3 and IDF cosine >= 0.46,
    found through prefixes cut by the cosine bound, equal a brute force over all pairs."""
    rng = random.Random(seed)
    vocabulary = [f"w{k}" for k in range(60)]
    texts = [
        " ".join(rng.sample(vocabulary[: rng.choice([9, 20, 60])], rng.randint(1, 9)))
        for _ in range(300)
    ]
    sets = encode(texts, Measure.TOKENS)
    weights = idf_weights(sets)
    focus = np.arange(0, 300, 7, dtype=np.int64)
    found = FocusedJoin(sets, 0.3, cosine_prefix(sets, weights, 0.46))(focus)
    cosines = weighted_overlaps(sets, found.left, found.right, weights)
    got = {
        (a, b)
        for a, b, c in zip(found.left.tolist(), found.right.tolist(), cosines.tolist(), strict=True)
        if c >= 0.46
    }
    jac = focused_join(sets, focus, 0.3)
    every = weighted_overlaps(sets, jac.left, jac.right, weights)
    want = {
        (a, b)
        for a, b, c in zip(jac.left.tolist(), jac.right.tolist(), every.tolist(), strict=True)
        if c >= 0.46
    }
    assert want and got == want
