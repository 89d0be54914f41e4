"""A catch *with the cure*: a mistake's optional ``cure`` groups, which an entry that caught a
recurrence must also match for the strict figure. Match groups accept any entry that repeats the
error, so an entry quoting the error with a wrong diagnosis is a catch; it is not one with the
cure. Without ``cure`` both figures agree (every label written before ``cure`` existed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.eval.replay import replay_project
from swarmq.eval.replay_labels import ReplayLabelsError, load_labels
from tests.eval.test_replay import LABELS, _history, _seed

MATCH = 'match: [["python3", "command not found: python"], ["python3", "not on path"]]'
# The cure of this label is one nothing in the fixture's sessions says, so forge cannot learn it
# during the replay: only a seeded entry can state it.
LOOSE = 'match: [["command not found: python"]]'
CURE = 'cure: [["pyenv rehash"], ["pyenv", "shims"]]'
WRONG = (
    "Bash `python -m pytest tests/` fails with exit code 127, (eval):1: command not found: "
    "python. pytest is broken on this machine: reinstall it with pip before running tests/."
)
RIGHT = (
    "Bash `python -m pytest tests/` fails with exit code 127, (eval):1: command not found: "
    "python. The pyenv shims are stale here: run pyenv rehash, then python -m pytest tests/."
)


def _labels(tmp_path: Path, *, cure: bool) -> Path:
    text = LABELS.replace(MATCH, LOOSE + ("\n        " + CURE if cure else ""))
    assert LOOSE in text
    path = tmp_path / f"labels-{cure}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_cure_groups_load_and_judge_an_entry(tmp_path: Path) -> None:
    (project,) = load_labels(_labels(tmp_path, cure=True)).projects
    (mistake,) = project.mistakes
    assert mistake.cure is not None
    assert "python-not-on-path" in project.matching(WRONG)
    assert project.curing(WRONG) == ()
    assert project.curing(RIGHT) == ("python-not-on-path",)
    # the cure alone is no catch: the entry must match the mistake too
    assert project.curing("run pyenv rehash after installing a version") == ()
    (loose,) = load_labels(_labels(tmp_path, cure=False)).projects
    assert loose.mistakes[0].cure is None
    assert loose.curing(WRONG) == ("python-not-on-path",)


def test_a_malformed_cure_is_refused_with_where_it_is(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        _labels(tmp_path, cure=True).read_text().replace(CURE, 'cure: [["pyenv"], []]'),
        encoding="utf-8",
    )
    with pytest.raises(ReplayLabelsError, match=r"mistakes\[0\]\.cure\[1\]: must be a non-empty"):
        load_labels(bad)


@pytest.mark.parametrize(("lesson", "with_cure"), [(WRONG, False), (RIGHT, True)])
def test_a_wrong_diagnosis_is_caught_but_not_with_the_cure(
    tmp_path: Path, lesson: str, with_cure: bool
) -> None:
    directory = _history(tmp_path)
    (project,) = load_labels(_labels(tmp_path, cure=True)).projects
    work = tmp_path / "work"
    _seed(work, lesson)
    figures = replay_project(directory, project, work)
    (outcome,) = figures.recurrences
    assert outcome.status in ("before", "failure"), outcome
    assert outcome.entry_text is not None and "command not found: python" in outcome.entry_text
    tally = figures.tally()
    assert tally.before + tally.at_failure == 1
    if with_cure:
        assert outcome.cured in ("before", "failure") and outcome.cured_entry is not None
        assert tally.cured == 1
    else:
        assert (outcome.cured, outcome.cured_entry) == ("missed", None)
        assert tally.cured == 0


def test_without_cure_groups_both_figures_agree(tmp_path: Path) -> None:
    directory = _history(tmp_path)
    (project,) = load_labels(_labels(tmp_path, cure=False)).projects
    work = tmp_path / "work"
    _seed(work, WRONG)
    figures = replay_project(directory, project, work)
    (outcome,) = figures.recurrences
    assert outcome.status != "missed"
    assert (outcome.cured, outcome.cured_entry) == (outcome.status, outcome.entry)
    assert figures.tally().cured == 1
