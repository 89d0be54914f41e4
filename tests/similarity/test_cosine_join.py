"""The cosine join returns exactly the pairs a brute force over every pair keeps."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.lesson_corpus import generate
from swarmq.similarity import join
from swarmq.similarity.join import (
    JoinResult,
    JoinStats,
    cosine_join,
    idf_weights,
    similarity_join,
    suffix_norms,
    weighted_overlaps,
)
from swarmq.similarity.measure import Measure
from swarmq.similarity.normalize import term_text
from swarmq.similarity.sets import TokenSets, encode

Triple = tuple[int, int, float]


def _brute(sets: TokenSets, weights: np.ndarray, cosine: float, jaccard: float) -> list[Triple]:
    """Every pair ``i < j`` of non-empty sets, Jaccard by Python sets (the division the join's
    verification does) and cosine by :func:`weighted_overlaps` (the sum the callers use)."""
    n = len(sets)
    if n < 2:
        return []
    left, right = np.triu_indices(n, 1)
    cosines = weighted_overlaps(sets, left, right, weights)
    members = [set(sets.members(i).tolist()) for i in range(n)]
    found: list[Triple] = []
    for a, b, c in zip(left.tolist(), right.tolist(), cosines.tolist(), strict=True):
        x, y = members[a], members[b]
        if not x or not y:
            continue
        inter = len(x & y)
        similarity = inter / max(len(x) + len(y) - inter, 1)
        if similarity >= jaccard and c >= cosine:
            found.append((a, b, similarity))
    return found


def _triples(result: JoinResult) -> list[Triple]:
    return list(
        zip(result.left.tolist(), result.right.tolist(), result.similarity.tolist(), strict=True)
    )


def _check(sets: TokenSets, cosine: float, jaccard: float) -> list[Triple]:
    weights = idf_weights(sets)
    got = cosine_join(sets, weights, cosine, jaccard)
    want = _brute(sets, weights, cosine, jaccard)
    assert _triples(got) == want  # same pairs, same Jaccard values, sorted by (left, right)
    assert len(got.empty) == 0
    return want


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(("cosine", "jaccard"), [(0.46, 0.3), (0.3, 0.5), (0.8, 0.2), (0.6, 0.6)])
def test_generated_lessons(seed: int, cosine: float, jaccard: float) -> None:
    lessons = generate(1200, seed=seed, dup_rate=0.08, odd_rate=0.02, dark_rate=0.02).lessons
    sets = encode([term_text(t) for t in lessons], Measure.TOKENS)
    assert _check(sets, cosine, jaccard)


def test_small_chunks_and_early_deduplication(monkeypatch: pytest.MonkeyPatch) -> None:
    """The candidates expanded a few at a time and de-duplicated many times give the same
    pairs (a pair sharing several prefix tokens is met in several chunks)."""
    monkeypatch.setattr(join, "CHUNK", 257)
    monkeypatch.setattr(join, "_DEDUPE", 100)
    lessons = generate(800, seed=5, dup_rate=0.1, odd_rate=0.0, dark_rate=0.0).lessons
    sets = encode([term_text(t) for t in lessons], Measure.TOKENS)
    stats: list[JoinStats] = []
    weights = idf_weights(sets)
    got = cosine_join(sets, weights, 0.46, 0.3, stats=stats)
    assert _triples(got) == _brute(sets, weights, 0.46, 0.3)
    assert stats[0].after_bitmap256 > stats[0].verified > 0  # duplicates were met


def test_thresholds_reached_exactly_are_kept() -> None:
    """A pair whose cosine equals the threshold to the last bit, and one whose Jaccard is
    exactly the threshold (1/3), are kept, as ``>=`` says."""
    texts = ["alpha beta gamma delta", "alpha beta gamma epsilon", "zeta eta theta", "zeta eta"]
    texts += [f"w{k} w{k + 1}" for k in range(20)]  # common background, so the IDF varies
    sets = encode(texts, Measure.TOKENS)
    weights = idf_weights(sets)
    pair = np.asarray([0]), np.asarray([1])
    exact = float(weighted_overlaps(sets, *pair, weights)[0])
    found = _check(sets, exact, 0.6)  # Jaccard 3/5
    assert (0, 1, 0.6) in found
    assert (0, 1, 0.6) not in _check(sets, float(np.nextafter(exact, 2.0)), 0.6)
    third = _check(sets, 0.1, 1 / 3)
    assert all(s >= 1 / 3 for *_, s in third) and any(s == 1 / 3 for *_, s in third)


def test_duplicates_and_empty_sets() -> None:
    """Identical sets pair with Jaccard 1.0; empty sets (no terms) pair with nothing, not even
    with each other: their cosine is 0."""
    texts = ["", "cache the schema", "", "cache the schema", "x", "cache schema", ""]
    sets = encode(texts, Measure.TOKENS)
    found = _check(sets, 0.46, 0.3)
    assert (1, 3, 1.0) in found
    assert not {a for a, b, _ in found} & {0, 2, 6} and not {b for a, b, _ in found} & {0, 2, 6}
    nothing = encode(["", "", ""], Measure.TOKENS)
    assert _check(nothing, 0.46, 0.3) == []
    assert _check(encode(["one two"], Measure.TOKENS), 0.46, 0.3) == []


WORDS = ["use", "the", "cache", "never", "run", "tests", "api", "node", "x", "config", "42"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=9).map(" ".join),
        min_size=1,
        max_size=30,
    ),
    cosine=st.sampled_from([0.05, 0.3, 0.46, 0.5, 0.7, 0.9, 1.0]),
    jaccard=st.sampled_from([0.1, 0.3, 1 / 3, 0.5, 2 / 3, 1.0]),
)
def test_random_small_inputs(texts: list[str], cosine: float, jaccard: float) -> None:
    _check(encode(texts, Measure.TOKENS), cosine, jaccard)


def test_skewed_sizes() -> None:
    """One very long set among short ones (the suffix norms' steps are per position)."""
    rng = random.Random(3)
    vocabulary = [f"w{k}" for k in range(80)]
    texts = [" ".join(rng.sample(vocabulary, rng.randint(1, 6))) for _ in range(200)]
    texts.append(" ".join(vocabulary))
    texts.append(" ".join(vocabulary[:70]))
    sets = encode(texts, Measure.TOKENS)
    found = _check(sets, 0.46, 0.3)
    assert (200, 201, 70 / 80) in found


def test_suffix_norms_are_each_sets_own() -> None:
    lessons = generate(300, seed=4).lessons
    sets = encode([term_text(t) for t in lessons], Measure.TOKENS)
    weights = idf_weights(sets)
    norms = suffix_norms(sets, weights)
    for i in range(len(sets)):
        lo, hi = int(sets.offsets[i]), int(sets.offsets[i + 1])
        want = [np.sqrt(np.sum(weights[p:hi] ** 2)) for p in range(lo, hi)]
        assert np.allclose(norms[lo:hi], want, rtol=1e-12, atol=1e-15)
        if hi > lo:
            assert abs(norms[lo] - 1.0) < 1e-9  # each set's weights are L2-normalised


@pytest.mark.parametrize("cosine", [0.0, -0.5])
def test_a_cosine_of_at_most_zero_cuts_nothing(cosine: float) -> None:
    """Every Jaccard pair of non-empty sets shares a token, so its cosine is positive: the
    pairs are the Jaccard join's, without its empty clique."""
    lessons = generate(600, seed=8, dup_rate=0.1, odd_rate=0.05, dark_rate=0.0).lessons
    sets = encode([term_text(t) for t in lessons], Measure.TOKENS)
    got = cosine_join(sets, idf_weights(sets), cosine, 0.3)
    plain = similarity_join(sets, 0.3)
    assert _triples(got) == _triples(plain) and len(got.left) > 50


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan")])
def test_bad_thresholds_are_refused(bad: float) -> None:
    sets = encode(["a b c", "a b d"], Measure.TOKENS)
    weights = idf_weights(sets)
    if bad > 1.0 or math.isnan(bad):
        with pytest.raises(ValueError, match="cosine threshold"):
            cosine_join(sets, weights, bad, 0.3)
    with pytest.raises(ValueError, match="jaccard threshold"):
        cosine_join(sets, weights, 0.46, bad)
