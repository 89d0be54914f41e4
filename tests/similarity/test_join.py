"""The fast join must return exactly the pairs (and values) of the naive pairwise scan."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmq.similarity.brute import pairwise_join, token_set
from swarmq.similarity.join import JoinResult, join_texts
from swarmq.similarity.measure import Measure
from swarmq.similarity.sets import encode

MEASURES = list(Measure)
THRESHOLDS = [0.05, 0.3, 1 / 3, 0.5, 0.6, 2 / 3, 0.7, 0.75, 0.85, 0.9, 1.0]

WORDS = [
    "use",
    "the",
    "cache",
    "always",
    "never",
    "run",
    "tests",
    "before",
    "merge",
    "api",
    "Docker",
    "node",
    "x",
    "a",
    "B",
    "TODO",
    "config",
    "schema",
    "42",
    "_",
]
ODD = [
    "",
    " ",
    "TODO",
    "x",
    "数据库迁移必须先备份",
    "请在提交前运行全部测试",
    "!!!",
    "naïve café",
    "K\u212aelvin ǅx İstanbul",
    "a\nb\tc\u00a0d",
    "tab\tsep",
    "Q",
    "q q q",
]


def _check(texts: list[str], threshold: float, measure: Measure) -> JoinResult:
    result = join_texts(texts, threshold, measure)
    assert list(result.pairs()) == pairwise_join(texts, threshold, measure)
    assert len(result) == len(list(result.pairs()))
    return result


def _sentence(rng: random.Random, low: int = 1, high: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_random_small_vocabulary(measure: Measure, threshold: float) -> None:
    rng = random.Random(f"{measure}-{threshold}")
    texts = [_sentence(rng) for _ in range(250)]
    texts += [rng.choice(ODD) for _ in range(25)]
    texts += [texts[rng.randrange(len(texts))] for _ in range(25)]  # identical copies
    rng.shuffle(texts)
    _check(texts, threshold, measure)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.one_of(
            st.lists(st.sampled_from(WORDS), min_size=0, max_size=15).map(" ".join),
            st.sampled_from(ODD),
            st.text(max_size=30),
        ),
        max_size=60,
    ),
    threshold=st.one_of(st.sampled_from(THRESHOLDS), st.floats(0.01, 1.0)),
    measure=st.sampled_from(MEASURES),
)
def test_hypothesis_against_brute_force(
    texts: list[str], threshold: float, measure: Measure
) -> None:
    _check(texts, threshold, measure)


@pytest.mark.parametrize("measure", MEASURES)
def test_empty_bigram_lessons_form_one_clique(measure: Measure) -> None:
    """One-word and Chinese-only lessons have no bigrams: Jaccard 1.0 with each other."""
    texts = ["TODO", "数据库迁移必须先备份", "x", "Always run the tests before merge", "日志", ""]
    result = _check(texts, 0.5, measure)
    if measure is Measure.BIGRAMS:
        assert sorted(result.empty.tolist()) == [0, 1, 2, 4, 5]
        assert len(result) == 10
        assert all(s == 1.0 for _, _, s in result.pairs())


def test_large_empty_group_stays_implicit() -> None:
    texts = ["日志"] * 3000 + [
        "run the tests before every merge",
        "run the tests before every merge now",
    ]
    result = join_texts(texts, 0.5)
    assert len(result.empty) == 3000
    assert len(result.left) == 1
    assert len(result) == 3000 * 2999 // 2 + 1


@pytest.mark.parametrize("measure", MEASURES)
def test_identical_and_long_texts(measure: Measure) -> None:
    rng = random.Random(3)
    long_texts = [
        " ".join(rng.choice(WORDS + [f"w{i}" for i in range(300)]) for _ in range(400))
        for _ in range(6)
    ]
    texts = ["use the cache before merge"] * 40 + long_texts + [long_texts[0] + " extra words"]
    for threshold in (0.5, 0.9, 1.0):
        _check(texts, threshold, measure)


def test_generated_lessons_match_brute_force() -> None:
    """Realistic lessons with planted near-duplicates, as in the benchmark."""
    from bench.lesson_corpus import generate

    texts = generate(1200, seed=11, odd_rate=0.02).lessons
    for measure in MEASURES:
        for threshold in (0.5, 0.7, 0.85):
            _check(texts, threshold, measure)


def test_encoding_matches_reference_token_sets() -> None:
    texts = [*ODD, "Use the API: always.", "use-the-api always", "Prefer stream.Readable.from()"]
    for measure in MEASURES:
        sets = encode(texts, measure)
        for i, text in enumerate(texts):
            assert len(sets.members(i)) == len(token_set(text, measure))


def test_threshold_is_validated() -> None:
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="threshold"):
            join_texts(["a b", "a b"], bad)


def test_no_input() -> None:
    assert len(join_texts([], 0.5)) == 0
    assert len(join_texts(["only one lesson here"], 0.5)) == 0
