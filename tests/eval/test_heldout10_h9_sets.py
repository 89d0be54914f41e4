"""The tenth held-apart forge split and the ninth held-apart replay set (issue 24, 2026-12-05):
their labels load with the repo's own loaders and fit their files (every session is read as the
format its label names, every label's words occur in its session, every labelled line is a
failing call), and their users are named in no other evaluation file, so a figure on them is a
reading on data nothing was tuned on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.eval.forge import Lesson
from swarmq.eval.forge import load_labels as load_forge_labels
from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import load_labels as load_replay_labels
from swarmq.transcripts.detect import detect_format
from swarmq.transcripts.reader import open_transcript
from tests.eval._clean_sets import EVAL, named_anywhere, other_evaluation_files

FORGE_LABELS = EVAL / "forge" / "labels-heldout10.yaml"
FORGE_SOURCES = EVAL / "forge" / "SOURCES-heldout10.md"
REPLAY_LABELS = EVAL / "replay" / "labels-h9.yaml"
REPLAY_SOURCES = EVAL / "replay" / "SOURCES-h9.md"
REPLAY_HISTORY = EVAL / "replay" / "histories-h9"
OURS = {FORGE_LABELS, FORGE_SOURCES, REPLAY_LABELS, REPLAY_SOURCES}
REPLAY_USER = "LAF-US"
# account names inside the replay set's paths and records, besides the owner
REPLAY_ACCOUNTS = ("loganf", "loganfinney27")


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


def test_the_tenth_forge_split_loads_and_fits_its_files() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    assert len(sessions) == 21
    assert len({s.repo for s in sessions}) == 11
    assert {s.split for s in sessions} == {"held-out"}
    assert {s.format for s in sessions} == {"claude-code", "codex-rollout"}
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == 34
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == 14
    assert sum(not s.lessons for s in sessions) == 3
    sources = FORGE_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= 3_000_000


def test_every_session_of_the_tenth_split_reads_as_its_labelled_format() -> None:
    """A session the readers took for another format, or whose lines they could not use, would
    be scored on messages forge never saw."""
    for session in load_forge_labels(FORGE_LABELS):
        assert detect_format(session.file) == session.format, session.file.name
        transcript = open_transcript(session.file, session.format)
        assert sum(1 for _ in transcript.messages()) > 0, session.file.name
        assert transcript.report.malformed == 0, (session.file.name, transcript.report.problems)


def test_every_words_entry_of_the_tenth_split_occurs_in_its_session() -> None:
    """A label no extraction could match (a word the session never says) would be a miss forge
    cannot avoid; each entry must occur, as the scorer reads it, in the session's own text."""
    for session in load_forge_labels(FORGE_LABELS):
        text = _session_text(session.file)
        for lesson in session.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (session.file.name, lesson)


def test_a_words_entry_missing_from_a_tenth_split_session_is_noticed() -> None:
    text = _session_text(EVAL / "forge" / "sessions" / "cc-omega-refusal-none.jsonl")
    assert not Lesson("x", (("libasound2t64",),)).matches(text)


def test_no_redacted_secret_of_the_tenth_split_is_left() -> None:
    """The literals SOURCES-heldout10.md says were replaced are gone, and the markers are there."""
    sessions = {s.file.name: s.file for s in load_forge_labels(FORGE_LABELS)}
    text = "\n".join(p.read_text(encoding="utf-8") for p in sessions.values())
    for prefix in ("ghp_", "github_pat_", "PRIVATE KEY-----"):
        assert prefix not in text
    marked = sessions["cc-bvt-desinstalador-quotes.jsonl"].read_text(encoding="utf-8")
    assert marked.count("[REDACTED]") == 20


def test_the_tenth_forge_splits_users_are_in_no_other_set() -> None:
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
    for account in REPLAY_ACCOUNTS:
        assert not any(account in _session_text(s.file).lower() for s in sessions), account


def test_the_ninth_replay_set_fits_its_files() -> None:
    labels = load_replay_labels(REPLAY_LABELS)
    projects = labels.select("held-apart")
    assert [p.id for p in projects] == ["laf-vault"]
    for project in projects:  # files exist, in time order, and every labelled line fails
        sessions = load_project(REPLAY_HISTORY, project)
        assert len(sessions) == len(project.sessions) >= 4
        assert project.mistakes and all(m.recurrences for m in project.mistakes)
        assert project.facts
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == 5
    sources = REPLAY_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{p.id}/{name}`" in sources for p in projects for name in p.sessions)
    size = sum(f.stat().st_size for f in REPLAY_HISTORY.rglob("*.jsonl"))
    assert size <= 2_000_000


def test_the_ninth_replay_sets_user_is_in_no_other_set() -> None:
    paths = other_evaluation_files(OURS)
    for name in (REPLAY_USER, *REPLAY_ACCOUNTS):
        assert not named_anywhere(name, paths), name
