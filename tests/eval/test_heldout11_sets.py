"""The eleventh held-apart forge split (issue 24, 2026-12-05): its labels load with the repo's own
loader and fit their files (every session is read as the format its label names, every label's
words occur in its session), no user holds more than a quarter of its lessons, and its users are
named in no other evaluation file, so a figure on it is a reading on data nothing was tuned on."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.eval.forge import Lesson, load_labels
from swarmq.transcripts.detect import detect_format
from swarmq.transcripts.reader import open_transcript
from tests.eval._clean_sets import EVAL, named_anywhere, other_evaluation_files

LABELS = EVAL / "forge" / "labels-heldout11.yaml"
SOURCES = EVAL / "forge" / "SOURCES-heldout11.md"
OURS = {LABELS, SOURCES}
# account names inside the set's paths and records, besides the owners; `zeus`, `teamspace` and
# `tvi` are left out: Lightning AI Studio's generic account and path, and a string found inside
# squashed words, all disclosed in SOURCES-heldout11.md
ACCOUNTS = ("tiagoyokoyama", "AceTheDactyl", "acead", "asauafth")


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


def test_the_eleventh_forge_split_loads_and_fits_its_files() -> None:
    sessions = load_labels(LABELS)
    assert len(sessions) == 16
    assert len({s.repo for s in sessions}) == 6
    assert {s.split for s in sessions} == {"held-out"}
    assert Counter(s.format for s in sessions) == {"claude-code": 9, "codex-rollout": 7}
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == 16
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == 11
    assert sum(not s.lessons for s in sessions) == 3
    sources = SOURCES.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= 3_000_000


def test_no_user_of_the_eleventh_split_holds_more_than_a_quarter_of_its_lessons() -> None:
    sessions = load_labels(LABELS)
    per_user = Counter(s.repo.split("/")[0] for s in sessions for _ in s.lessons)
    assert max(per_user.values()) * 4 <= sum(per_user.values())


def test_every_session_of_the_eleventh_split_reads_as_its_labelled_format() -> None:
    """A session the readers took for another format, or whose lines they could not use, would
    be scored on messages forge never saw."""
    for session in load_labels(LABELS):
        assert detect_format(session.file) == session.format, session.file.name
        transcript = open_transcript(session.file, session.format)
        assert sum(1 for _ in transcript.messages()) > 0, session.file.name
        assert transcript.report.malformed == 0, (session.file.name, transcript.report.problems)


def test_every_words_entry_of_the_eleventh_split_occurs_in_its_session() -> None:
    """A label no extraction could match (a word the session never says) would be a miss forge
    cannot avoid; each entry must occur, as the scorer reads it, in the session's own text."""
    for session in load_labels(LABELS):
        text = _session_text(session.file)
        for lesson in session.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (session.file.name, lesson)


def test_a_words_entry_missing_from_an_eleventh_split_session_is_noticed() -> None:
    text = _session_text(EVAL / "forge" / "sessions" / "cc-gym-help-none.jsonl")
    assert not Lesson("x", (("index.lock",),)).matches(text)


def test_no_redacted_secret_of_the_eleventh_split_is_left() -> None:
    """The literals SOURCES-heldout11.md says were replaced are gone, and the markers are there."""
    sessions = {s.file.name: s.file for s in load_labels(LABELS)}
    text = "\n".join(p.read_text(encoding="utf-8") for p in sessions.values())
    for prefix in ("ghp_", "github_pat_", "pplx-", "tvly-", "figd_", "AIza", "PRIVATE KEY-----"):
        assert prefix not in text, prefix
    marked = sessions["cc-eq-perplexity-401.jsonl"].read_text(encoding="utf-8")
    assert marked.count("[REDACTED]") == 34
    marked = sessions["cx-avc-tsx-eperm.jsonl"].read_text(encoding="utf-8")
    assert marked.count("[REDACTED]") == 6


def test_the_eleventh_forge_splits_users_are_in_no_other_set() -> None:
    sessions = load_labels(LABELS)
    others = [
        labelled
        for path in sorted((EVAL / "forge").glob("labels*.yaml"))
        if path != LABELS
        for labelled in load_labels(path)
    ]
    assert not {s.file.name for s in sessions} & {s.file.name for s in others}
    assert not {s.repo for s in sessions} & {s.repo for s in others}
    paths = other_evaluation_files(OURS)
    for name in sorted({s.repo.split("/")[0] for s in sessions} | set(ACCOUNTS)):
        assert not named_anywhere(name, paths), name
