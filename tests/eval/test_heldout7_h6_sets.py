"""The seventh held-apart forge split and the sixth held-apart replay set (issue 24, 2026-12-05):
their labels load with the repo's own loaders and fit their files, and their users are named in
no other evaluation file, so a figure on them is a reading on data nothing was tuned on."""

from __future__ import annotations

from swarmq.eval.forge import load_labels as load_forge_labels
from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import load_labels as load_replay_labels
from tests.eval._clean_sets import EVAL, named_anywhere, other_evaluation_files

FORGE_LABELS = EVAL / "forge" / "labels-heldout7.yaml"
FORGE_SOURCES = EVAL / "forge" / "SOURCES-heldout7.md"
REPLAY_LABELS = EVAL / "replay" / "labels-h6.yaml"
REPLAY_SOURCES = EVAL / "replay" / "SOURCES-h6.md"
OURS = {FORGE_LABELS, FORGE_SOURCES, REPLAY_LABELS, REPLAY_SOURCES}


def test_the_seventh_forge_split_loads_and_fits_its_files() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    assert len(sessions) == 17
    assert len({s.repo for s in sessions}) == 9
    assert {s.split for s in sessions} == {"held-out"}
    assert {s.format for s in sessions} == {"claude-code", "codex-rollout"}
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == 29
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == 22
    assert sum(not s.lessons for s in sessions) == 4
    sources = FORGE_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= 2_200_000


def test_the_seventh_forge_splits_users_are_in_no_other_set() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    others = [
        lesson_file
        for path in sorted((EVAL / "forge").glob("labels*.yaml"))
        if path != FORGE_LABELS
        for lesson_file in load_forge_labels(path)
    ]
    assert not {s.file.name for s in sessions} & {s.file.name for s in others}
    paths = other_evaluation_files(OURS)
    for owner in sorted({s.repo.split("/")[0] for s in sessions}):
        assert not named_anywhere(owner, paths), owner


def test_the_sixth_replay_set_fits_its_files() -> None:
    labels = load_replay_labels(REPLAY_LABELS)
    projects = labels.select("held-apart")
    assert [p.id for p in projects] == ["mkid-nextmavens-platform", "mkid-flow-home"]
    for project in projects:  # files exist, in time order, and every labelled line fails
        sessions = load_project(EVAL / "replay" / "histories-h6", project)
        assert len(sessions) == len(project.sessions) >= 4
        assert project.mistakes and all(m.recurrences for m in project.mistakes)
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == 25
    sources = REPLAY_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{p.id}/{name}`" in sources for p in projects for name in p.sessions)


def test_the_sixth_replay_sets_user_is_in_no_other_set() -> None:
    assert not named_anywhere("Mkid095", other_evaluation_files(OURS))
    # the forge split of the same day names Mkid095 only to say it is not in it
    assert "Mkid095/vps-system" not in {s.repo for s in load_forge_labels(FORGE_LABELS)}
