"""The eighth held-apart forge split and the seventh held-apart replay set (issue 24, 2026-12-05):
their labels load with the repo's own loaders and fit their files, and their users are named in
no other evaluation file, so a figure on them is a reading on data nothing was tuned on."""

from __future__ import annotations

from swarmq.eval.forge import load_labels as load_forge_labels
from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import load_labels as load_replay_labels
from tests.eval._clean_sets import EVAL, named_anywhere, other_evaluation_files

FORGE_LABELS = EVAL / "forge" / "labels-heldout8.yaml"
FORGE_SOURCES = EVAL / "forge" / "SOURCES-heldout8.md"
REPLAY_LABELS = EVAL / "replay" / "labels-h7.yaml"
REPLAY_SOURCES = EVAL / "replay" / "SOURCES-h7.md"
OURS = {FORGE_LABELS, FORGE_SOURCES, REPLAY_LABELS, REPLAY_SOURCES}


def test_the_eighth_forge_split_loads_and_fits_its_files() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    assert len(sessions) == 6
    assert len({s.repo for s in sessions}) == 3
    assert {s.split for s in sessions} == {"held-out"}
    assert {s.format for s in sessions} == {"claude-code", "codex-rollout"}
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == 12
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == 8
    assert sum(not s.lessons for s in sessions) == 2
    sources = FORGE_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= 1_400_000


def test_the_eighth_forge_splits_users_are_in_no_other_set() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    others = [
        labelled
        for path in sorted((EVAL / "forge").glob("labels*.yaml"))
        if path != FORGE_LABELS
        for labelled in load_forge_labels(path)
    ]
    assert not {s.file.name for s in sessions} & {s.file.name for s in others}
    paths = other_evaluation_files(OURS)
    for owner in sorted({s.repo.split("/")[0] for s in sessions}):
        assert not named_anywhere(owner, paths), owner
    # nor is the user of the replay set of the same day
    assert "aistrad" not in {s.repo.split("/")[0] for s in sessions}


def test_the_seventh_replay_set_fits_its_files() -> None:
    labels = load_replay_labels(REPLAY_LABELS)
    projects = labels.select("held-apart")
    assert [p.id for p in projects] == ["ais-fortune-ai", "ais-vibelife"]
    for project in projects:  # files exist, in time order, and every labelled line fails
        sessions = load_project(EVAL / "replay" / "histories-h7", project)
        assert len(sessions) == len(project.sessions) >= 4
        assert len(project.mistakes) >= 2 and all(m.recurrences for m in project.mistakes)
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == 15
    sources = REPLAY_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{p.id}/{name}`" in sources for p in projects for name in p.sessions)
    size = sum(f.stat().st_size for f in (EVAL / "replay" / "histories-h7").rglob("*.jsonl"))
    assert size <= 2_400_000


def test_the_seventh_replay_sets_user_is_in_no_other_set() -> None:
    assert not named_anywhere("aistrad", other_evaluation_files(OURS))
