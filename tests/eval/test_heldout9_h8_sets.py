"""The ninth held-apart forge split and the eighth held-apart replay set (issue 24, 2026-12-05):
their labels load with the repo's own loaders and fit their files (every label's words occur in
its session, every labelled line is a failing call), and their users are named in no other
evaluation file, so a figure on them is a reading on data nothing was tuned on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.eval.forge import Lesson
from swarmq.eval.forge import load_labels as load_forge_labels
from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import load_labels as load_replay_labels
from tests.eval._clean_sets import EVAL, named_anywhere, other_evaluation_files

FORGE_LABELS = EVAL / "forge" / "labels-heldout9.yaml"
FORGE_SOURCES = EVAL / "forge" / "SOURCES-heldout9.md"
REPLAY_LABELS = EVAL / "replay" / "labels-h8.yaml"
REPLAY_SOURCES = EVAL / "replay" / "SOURCES-h8.md"
REPLAY_HISTORY = EVAL / "replay" / "histories-h8"
OURS = {FORGE_LABELS, FORGE_SOURCES, REPLAY_LABELS, REPLAY_SOURCES}
REPLAY_USER = "K3RN-LABS"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _session_text(path: Path) -> str:
    """Every string of the session's records, decoded (a label's words are read in the text the
    agent and the tools wrote, not in its JSON escaping)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(s for line in lines if line.strip() for s in _strings(json.loads(line)))


def test_the_ninth_forge_split_loads_and_fits_its_files() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    assert len(sessions) == 21
    assert len({s.repo for s in sessions}) == 8
    assert {s.split for s in sessions} == {"held-out"}
    assert {s.format for s in sessions} == {"claude-code", "codex-rollout"}
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == 41
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == 18
    assert sum(not s.lessons for s in sessions) == 3
    sources = FORGE_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= 3_200_000


def test_every_words_entry_of_the_ninth_split_occurs_in_its_session() -> None:
    """A label no extraction could match (a word the session never says) would be a miss forge
    cannot avoid; each entry must occur, as the scorer reads it, in the session's own text."""
    for session in load_forge_labels(FORGE_LABELS):
        # a lesson matched against the whole session: every entry has an alternative in it
        text = _session_text(session.file)
        for lesson in session.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (session.file.name, lesson)


def test_a_words_entry_missing_from_its_session_is_noticed() -> None:
    text = _session_text(EVAL / "forge" / "sessions" / "cc-cgd-gemini-none.jsonl")
    assert not Lesson("x", (("schtasks",),)).matches(text)


def test_the_ninth_forge_splits_users_are_in_no_other_set() -> None:
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
    assert REPLAY_USER not in {s.repo.split("/")[0] for s in sessions}


def test_the_eighth_replay_set_fits_its_files() -> None:
    labels = load_replay_labels(REPLAY_LABELS)
    projects = labels.select("held-apart")
    assert [p.id for p in projects] == ["k3rn-n8n"]
    for project in projects:  # files exist, in time order, and every labelled line fails
        sessions = load_project(REPLAY_HISTORY, project)
        assert len(sessions) == len(project.sessions) >= 4
        assert project.mistakes and all(m.recurrences for m in project.mistakes)
        assert project.facts
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == 3
    sources = REPLAY_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{p.id}/{name}`" in sources for p in projects for name in p.sessions)
    size = sum(f.stat().st_size for f in REPLAY_HISTORY.rglob("*.jsonl"))
    assert size <= 2_000_000


def test_the_eighth_replay_sets_user_is_in_no_other_set() -> None:
    assert not named_anywhere(REPLAY_USER, other_evaluation_files(OURS))
