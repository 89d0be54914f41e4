"""The twelfth held-apart forge split and the tenth held-apart replay set (issue 24, 2026-12-05):
their labels load with the repo's own loaders and fit their files (every session is read as the
format its label names, every label's words occur in its session, every labelled line is a
failing call), no user holds more than a quarter of the split's lessons, and their users are
named in no other evaluation file, so a figure on them is a reading on data nothing was tuned
on."""

from __future__ import annotations

from collections import Counter

from swarmq.eval.forge import Lesson
from swarmq.eval.forge import load_labels as load_forge_labels
from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import load_labels as load_replay_labels
from swarmq.transcripts.detect import detect_format
from swarmq.transcripts.reader import open_transcript
from tests.eval._clean_sets import EVAL, named_anywhere, other_evaluation_files, session_text

FORGE_LABELS = EVAL / "forge" / "labels-heldout12.yaml"
FORGE_SOURCES = EVAL / "forge" / "SOURCES-heldout12.md"
REPLAY_LABELS = EVAL / "replay" / "labels-h10.yaml"
REPLAY_SOURCES = EVAL / "replay" / "SOURCES-h10.md"
REPLAY_HISTORY = EVAL / "replay" / "histories-h10"
OURS = {FORGE_LABELS, FORGE_SOURCES, REPLAY_LABELS, REPLAY_SOURCES}
# distinctive account names inside the forge split's paths and records, besides the owners; the
# generic ones (`zak`, `nick`, `admin`, `apple`, `claude-user`) are left out, as
# SOURCES-heldout12.md discloses
FORGE_ACCOUNTS = ("Parker", "moxa", "Niraj", "namma", "ryoryo")
REPLAY_USER = "Gino-Loja"
# the Windows account inside the replay set's paths and records
REPLAY_ACCOUNTS = ("ginol",)


def test_the_twelfth_forge_split_loads_and_fits_its_files() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    assert len(sessions) == 18
    assert len({s.repo for s in sessions}) == 10
    assert {s.split for s in sessions} == {"held-out"}
    assert Counter(s.format for s in sessions) == {"claude-code": 14, "codex-rollout": 4}
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == 22
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == 14
    assert sum(not s.lessons for s in sessions) == 3
    sources = FORGE_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= 3_000_000


def test_no_user_of_the_twelfth_split_holds_more_than_a_quarter_of_its_lessons() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    per_user = Counter(s.repo.split("/")[0] for s in sessions for _ in s.lessons)
    assert max(per_user.values()) * 4 <= sum(per_user.values())


def test_every_session_of_the_twelfth_split_reads_as_its_labelled_format() -> None:
    """A session the readers took for another format, or whose lines they could not use, would
    be scored on messages forge never saw."""
    for session in load_forge_labels(FORGE_LABELS):
        assert detect_format(session.file) == session.format, session.file.name
        transcript = open_transcript(session.file, session.format)
        assert sum(1 for _ in transcript.messages()) > 0, session.file.name
        assert transcript.report.malformed == 0, (session.file.name, transcript.report.problems)


def test_every_words_entry_of_the_twelfth_split_occurs_in_its_session() -> None:
    """A label no extraction could match (a word the session never says) would be a miss forge
    cannot avoid; each entry must occur, as the scorer reads it, in the session's own text."""
    for session in load_forge_labels(FORGE_LABELS):
        text = session_text(session.file)
        for lesson in session.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (session.file.name, lesson)


def test_a_words_entry_missing_from_a_twelfth_split_session_is_noticed() -> None:
    text = session_text(EVAL / "forge" / "sessions" / "cc-capsule-hi-none.jsonl")
    assert not Lesson("x", (("dubious ownership",),)).matches(text)


def test_no_redacted_secret_of_the_twelfth_split_or_tenth_replay_is_left() -> None:
    """The literals the two SOURCES files say were replaced are gone, and the markers are
    there."""
    forge = {s.file.name: s.file for s in load_forge_labels(FORGE_LABELS)}
    replay = sorted(REPLAY_HISTORY.rglob("*.jsonl"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in [*forge.values(), *replay])
    for marker in ("ghp_", "github_pat_", "eyJhbGci", "re_fC9", "superpassword", "@gmail.com"):
        assert marker not in text, marker
    counts = {"cx-twstock-ps5-n8n.jsonl": 7, "cc-dropbox-git-missing.jsonl": 10}
    counts |= {"cc-vasp-auto-approve.jsonl": 4, "cc-buildroot-ci-rev.jsonl": 2}
    for name, expected in counts.items():
        assert forge[name].read_text(encoding="utf-8").count("[REDACTED]") == expected, name
    assert sum(p.read_text(encoding="utf-8").count("[REDACTED]") for p in replay) == 6


def test_the_twelfth_forge_splits_users_are_in_no_other_set() -> None:
    sessions = load_forge_labels(FORGE_LABELS)
    others = [
        labelled
        for path in sorted((EVAL / "forge").glob("labels*.yaml"))
        if path != FORGE_LABELS
        for labelled in load_forge_labels(path)
    ]
    assert not {s.file.name for s in sessions} & {s.file.name for s in others}
    assert not {s.repo for s in sessions} & {s.repo for s in others}
    paths = other_evaluation_files(OURS)
    for name in sorted({s.repo.split("/")[0] for s in sessions} | set(FORGE_ACCOUNTS)):
        assert not named_anywhere(name, paths), name
    # nor is the user of the replay set of the same day
    assert REPLAY_USER not in {s.repo.split("/")[0] for s in sessions}
    for account in REPLAY_ACCOUNTS:
        assert not any(account in session_text(s.file).lower() for s in sessions), account


def test_the_tenth_replay_set_fits_its_files() -> None:
    labels = load_replay_labels(REPLAY_LABELS)
    projects = labels.select("held-apart")
    assert [p.id for p in projects] == ["kardex"]
    for project in projects:  # files exist, in time order, and every labelled line fails
        sessions = load_project(REPLAY_HISTORY, project)
        assert len(sessions) == len(project.sessions) >= 4
        assert project.mistakes and all(m.recurrences for m in project.mistakes)
        assert project.facts
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == 9
    sources = REPLAY_SOURCES.read_text(encoding="utf-8")
    assert all(f"`{p.id}/{name}`" in sources for p in projects for name in p.sessions)
    size = sum(f.stat().st_size for f in REPLAY_HISTORY.rglob("*.jsonl"))
    assert size <= 1_500_000


def test_the_tenth_replay_sets_user_is_in_no_other_set() -> None:
    paths = other_evaluation_files(OURS)
    for name in (REPLAY_USER, *REPLAY_ACCOUNTS):
        assert not named_anywhere(name, paths), name
