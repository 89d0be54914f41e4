"""Issue 26's consolidation bar on translated duplicates (eval/knowledge/xlang, held split)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.eval.knowledge import evaluate_consolidation, load_labels
from swarmq.similarity.multilingual import available

LABELS = Path(__file__).resolve().parents[2] / "eval" / "knowledge" / "xlang" / "labels.json"


@pytest.mark.skipif(not available(), reason="the multilingual extra is not installed")
def test_translations_merge_and_nothing_that_must_stay_apart_does() -> None:
    figures = evaluate_consolidation(load_labels(LABELS), "held")
    assert figures.recall >= 0.85
    assert figures.violations == 0
    assert sum(rate.total for rate in figures.apart.values()) == 35
