"""The learned relevance's fitting script judges the other packaged models' cosines as measures
(issue 26, "the packaged MiniLM and multilingual cosines in the learned relevance, left out"):
each dense variant reads the columns ``relevance_features.py --extra`` writes, in place of or
beside WordLlama's, and refuses rows written without them rather than fitting on zeros."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

KNOWLEDGE = Path(__file__).parents[2] / "eval" / "knowledge"


@pytest.fixture(scope="module")
def fit() -> Iterator[ModuleType]:
    sys.path.insert(0, str(KNOWLEDGE))
    try:
        import fit_relevance

        yield fit_relevance
    finally:
        sys.path.remove(str(KNOWLEDGE))


def row(cos: float, tcos: float | None, lcos: float, mcos: float, relevant: bool) -> dict[str, Any]:
    return {
        "share": 0.2,
        "rare": 0.1,
        "cos": cos,
        "tcos": tcos,
        "lcos": lcos,
        "ltcos": None if tcos is None else lcos + 0.1,
        "mcos": mcos,
        "mtcos": None if tcos is None else mcos + 0.1,
        "relevant": relevant,
        "words": 40,
        "rank": 1,
        "position": 1,
        "qwords": 3,
    }


def query(text: str) -> dict[str, Any]:
    return {
        "text": text,
        "candidates": [row(0.3, 0.2, 0.5, 0.6, True), row(0.1, None, 0.2, 0.4, False)],
    }


def test_minilm_replaces_wordllamas_cosines(fit: ModuleType) -> None:
    x, names = fit.features(query("Add a retry"), "minilm")
    assert names == ["share", "cos", "tcos", "rare"]
    assert x[:, 1].tolist() == pytest.approx([0.5, 0.2])
    assert x[:, 2].tolist() == pytest.approx([0.6, 0.2])  # an untitled record: its text's


def test_the_added_variants_keep_wordllamas_beside(fit: ModuleType) -> None:
    x, names = fit.features(query("Add a retry"), "minilm_use")
    assert names == ["share", "cos", "tcos", "rare", "mcos", "mtcos"]
    assert x[:, names.index("mcos")].tolist() == pytest.approx([0.6, 0.4])
    x, names = fit.features(query("Add a retry"), "minilm_add")
    assert names == ["share", "cos", "tcos", "rare", "lcos", "ltcos"]
    assert x[:, 1].tolist() == pytest.approx([0.3, 0.1])


def test_the_multilingual_cosine_raises_only_a_foreign_tasks(fit: ModuleType) -> None:
    english, _ = fit.features(query("Implement the delete command"), "use_foreign")
    portuguese, _ = fit.features(
        query("Implementa comandos para atualizar usuários"), "use_foreign"
    )
    assert english[:, 1].tolist() == pytest.approx([0.3, 0.1])
    assert portuguese[:, 1].tolist() == pytest.approx([0.6, 0.4])
    assert np.all(portuguese[:, 1] >= english[:, 1])


def test_rows_without_the_extra_columns_are_refused(fit: ModuleType) -> None:
    bare = query("Add a retry")
    for candidate in bare["candidates"]:
        del candidate["lcos"]
    with pytest.raises(KeyError, match="--extra"):
        fit.features(bare, "minilm")


def test_the_silence_weight_counts_silence_that_much(fit: ModuleType) -> None:
    queries = [{"has_relevant": True}, {"has_relevant": False}]
    oks = [False, True]
    assert fit._objective(oks, queries) == pytest.approx(1.0)
    fit.SILENCE_WEIGHT = 2.0
    try:
        assert fit._objective(oks, queries) == pytest.approx(2.0)
    finally:
        fit.SILENCE_WEIGHT = 1.0
