"""Issue 24, round 6 tooling: the second look that reads a passage's meaning, left out per set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from swarmq.eval.forge_meaning import (
    Rows,
    collect,
    embed_rows,
    fit,
    label_sets,
    leave_one_set_out,
)
from swarmq.eval.forge_requests import FEATURES
from swarmq.eval.metrics import Counts
from tests.eval.test_forge_eval import write_labels
from tests.eval.test_forge_train import LABELS, sessions
from tests.forge.sessions import NARRATED


def test_the_blind_set_and_reviewed_originals_are_not_pooled(tmp_path: Path) -> None:
    for name in (
        "labels",
        "labels-h20",
        "labels-h20-qa",
        "labels-heldout22",
        "labels-heldout23",
        "labels-h9",
    ):
        (tmp_path / f"{name}.yaml").write_text("sessions: []\n", encoding="utf-8")
    assert [p.name for p in label_sets(tmp_path)] == [
        "labels-h20-qa.yaml",
        "labels-h9.yaml",
        "labels.yaml",
    ]
    with pytest.raises(ValueError, match="blind"):
        collect([tmp_path / "labels-heldout22.yaml"])


def test_rows_are_the_rejected_user_passages_labelled_by_missed_prose(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    rows = collect([labels], NARRATED)
    assert [r.labels for r in rows] == [[1], [1], [1]]
    assert [len(r.base) for r in rows] == [1, 0, 0]
    assert {r.group for r in rows} == {"labels"}
    embed_rows(rows, lambda texts: np.ones((len(texts), 3)))
    assert [r.meaning.shape for r in rows] == [(1, 3)] * 3


def _synthetic(rows: list[Rows], *, meaning: bool) -> list[Rows]:
    """Each session its own group; the lesson's passage plus padding, the lesson marked only in
    the meaning (one direction; ``meaning=False``: no meaning at all), cheap features zero."""
    rng = np.random.default_rng(7)
    out = []
    for n, r in enumerate(rows):
        s = Rows(r.session, f"set{n}", r.base)
        vectors = []
        for i, text in enumerate(r.texts):
            for copy in range(12):
                lesson = r.labels[i] == 1 and copy == 0
                s.texts.append(text if lesson else f"noise {copy} {i}")
                s.cheap.append([0.0] * len(FEATURES))
                s.labels.append(int(lesson))
                v = rng.normal(0.0, 0.1, 4) if meaning else np.zeros(4)
                v[0] += 1.0 if lesson and meaning else 0.0
                vectors.append(v)
        s.meaning = np.array(vectors)
        out.append(s)
    return out


def test_a_meaning_the_cheap_features_miss_is_learned_and_kept_left_out(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    rows = collect([labels], NARRATED)
    marked = _synthetic(rows, meaning=True)
    probs = fit(marked, dims=4).probabilities(marked[0])
    assert probs[0] > 0.5 > max(probs[1:])
    result = leave_one_set_out(marked, dims=4, inner=2)
    assert result.before == Counts(1, 0, 4)
    assert result.after == Counts(4, 0, 1)
    assert result.auc == 1.0
    assert (result.prose_before, result.prose_after) == (1, 4)
    blank = leave_one_set_out(_synthetic(rows, meaning=False), dims=4, inner=2)
    assert blank.auc == 0.5  # without the meaning nothing separates the lesson from padding
    assert blank.after != result.after
