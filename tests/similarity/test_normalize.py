"""Normalised terms and the IDF-weighted cosine the paraphrase pass computes in numpy."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from swarmq.similarity.join import idf_weights, weighted_overlaps
from swarmq.similarity.measure import Measure
from swarmq.similarity.normalize import STOP_WORDS, term_text, terms
from swarmq.similarity.sets import encode


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getUserByID", ["getuserbyid", "get", "user", "id"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("src/app/page.tsx", ["src", "app", "page", "tsx"]),
        ("web-llm v0.2.83 has NO WASM backend", ["web", "llm", "v0.2.83", "wasm", "backend"]),
        ("HTTP 404 on retries", ["http", "404", "retri"]),
        ("The tests are validating the validation", ["test", "valid", "valid"]),
    ],
)
def test_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_weighted_overlaps_is_the_idf_cosine_of_term_sets() -> None:
    rng = random.Random(11)
    vocabulary = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "fox",
        "golf",
        "hotel",
        "india",
        "kilo",
    ]
    texts = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 7))) for _ in range(60)]
    sets = encode([term_text(t) for t in texts], Measure.TOKENS)
    left, right = np.triu_indices(len(texts), k=1)
    got = weighted_overlaps(sets, left.astype(np.int64), right.astype(np.int64), idf_weights(sets))
    docs = [set(terms(t)) for t in texts]
    df = Counter(term for doc in docs for term in doc)
    idf = {t: math.log((1 + len(docs)) / (1 + c)) + 1 for t, c in df.items()}

    def cosine(a: set[str], b: set[str]) -> float:
        norm = math.sqrt(sum(idf[t] ** 2 for t in a)) * math.sqrt(sum(idf[t] ** 2 for t in b))
        return sum(idf[t] ** 2 for t in a & b) / norm

    want = [cosine(docs[i], docs[j]) for i, j in zip(left.tolist(), right.tolist(), strict=True)]
    assert np.allclose(got, want)
    assert "the" in STOP_WORDS and "never" not in STOP_WORDS
