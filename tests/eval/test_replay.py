"""`swarmq eval replay`: the mechanics on a small real-file history, and that it is honest (a
recurrence whose lesson is in the store is caught, one whose lesson is not is missed)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from swarmq.eval._replay_history import read_session
from swarmq.eval._replay_schedule import consolidation_runs
from swarmq.eval.replay import replay, replay_project
from swarmq.eval.replay_labels import ReplayLabelsError, load_labels
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.project import KnowledgeStore
from swarmq.roster.schema import ScheduleEntry
from swarmq.storage.locking import LocalLocks

FIRST = "s1-python-missing"
SECOND = "s2-python-again"


def _record(session: str, n: int, at: str, role: str, content: Any) -> str:
    return json.dumps(
        {
            "type": role,
            "sessionId": session,
            "uuid": f"{session}-{n}",
            "parentUuid": f"{session}-{n - 1}" if n else None,
            "timestamp": at,
            "cwd": "/home/dev/parser",
            "message": {"role": role, "content": content},
        }
    )


def _call(cid: str, command: str) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": command}}]


def _result(cid: str, text: str, error: bool) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": cid, "content": text, "is_error": error}]


def _history(root: Path) -> Path:
    """Two Claude Code sessions of one project, 30 hours apart; the second repeats the first's
    mistake (`python` is not on PATH) at its line 3."""
    project = root / "history" / "parser"
    project.mkdir(parents=True)
    first = [
        ("user", "2026-01-05T10:00:00.000Z", "Run the parser test suite"),
        ("assistant", "2026-01-05T10:00:05.000Z", _call("t1", "python -m pytest")),
        (
            "user",
            "2026-01-05T10:00:06.000Z",
            _result("t1", "Exit code 127\n(eval):1: command not found: python", True),
        ),
        ("assistant", "2026-01-05T10:00:10.000Z", _call("t2", "python3 -m pytest")),
        ("user", "2026-01-05T10:00:20.000Z", _result("t2", "3 passed in 0.2s", False)),
        (
            "assistant",
            "2026-01-05T10:00:25.000Z",
            [
                {
                    "type": "text",
                    "text": "Note: `python` is not on PATH on this machine, so always run "
                    "`python3` instead. All 3 tests pass.",
                }
            ],
        ),
    ]
    second = [
        ("user", "2026-01-06T16:00:00.000Z", "Add a test for the tokenizer"),
        ("assistant", "2026-01-06T16:00:04.000Z", _call("t1", "python -m pytest tests/")),
        (
            "user",
            "2026-01-06T16:00:05.000Z",
            _result("t1", "Exit code 127\n(eval):1: command not found: python", True),
        ),
        ("assistant", "2026-01-06T16:00:09.000Z", _call("t2", "python3 -m pytest tests/")),
        ("user", "2026-01-06T16:00:19.000Z", _result("t2", "4 passed in 0.2s", False)),
    ]
    for name, rows in ((FIRST, first), (SECOND, second)):
        lines = [_record(name, n, at, role, c) for n, (role, at, c) in enumerate(rows)]
        (project / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "history"


LABELS = f"""\
version: 1
projects:
  - id: parser
    split: held-apart
    sessions: [{FIRST}.jsonl, {SECOND}.jsonl]
    mistakes:
      - id: python-not-on-path
        what: python is not on PATH here; use python3.
        match: [["python3", "command not found: python"], ["python3", "not on path"]]
        first: {{session: {FIRST}.jsonl, line: 3}}
        recurrences:
          - {{session: {SECOND}.jsonl, line: 3}}
    facts:
      - id: parser-tests
        what: the tests run with pytest.
        match: [["pytest"]]
"""


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, Path]:
    labels = tmp_path / "labels.yaml"
    labels.write_text(LABELS, encoding="utf-8")
    return _history(tmp_path), labels


def _seed(work: Path, lesson: str) -> None:
    """A lesson already in the project's knowledge store when the replay starts."""
    swarm = work / "project" / ".swarm"
    swarm.mkdir(parents=True)
    store = KnowledgeStore(swarm, locks=LocalLocks(work / "locks"), data_dir=work / "data")
    added = store.add_lesson(lesson, category="tooling", tags=["shell"], auto_generated=False)
    assert added.entry is not None


def test_replay_runs_forge_and_the_close_loop_on_the_sessions_clock(
    history: tuple[Path, Path], tmp_path: Path
) -> None:
    directory, labels = history
    work = tmp_path / "work"
    figures = replay(directory, load_labels(labels), work=work)
    (project,) = figures.projects
    first, second = project.sessions
    assert (first.failures, second.failures) == (1, 1)
    assert first.forged >= 1  # the failure→fix lesson reached the pool
    layout = AgentsLayout(work / "parser" / "project" / ".agents")
    added = {str(e.data.get("added_at")) for e in Pool(layout).entries()}
    graduated = [p.name for p in (layout.root / "learnings").glob("*.md")]
    # Forge, the pool and promotion ran at each session's last timestamp, not at the wall clock.
    ends = ("2026-01-05T10:00:25", "2026-01-06T16:00:19")
    assert added or graduated
    assert all(a.startswith(ends) for a in added), added
    assert all(name.startswith(("2026-01-05", "2026-01-06")) for name in graduated), graduated
    store = KnowledgeStore(work / "parser" / "project" / ".swarm", locks=LocalLocks(tmp_path))
    created = {str(e.data.get("created_at")) for e in store.swarm.list()}
    # Whatever reached the store did so at a session's end, on the sessions' clock.
    assert all(c.startswith(("2026-01-05T10:00:25", "2026-01-06T16:00:19")) for c in created)
    assert second.entries_after == len(store.swarm.list(active_only=True))
    kinds = [log.kind for log in second.injections]
    assert kinds[:2] == ["session_start", "first_request"]
    assert kinds[2:] == ["recall_error", "inject_failure"]
    assert [log.line for log in second.injections[2:]] == [3, 3]
    assert project.consolidations == []  # the default roster schedules no consolidation
    (outcome,) = project.recurrences
    assert outcome.mistake == "python-not-on-path" and outcome.line == 3
    assert "command not found: python" in outcome.failure


def test_a_recurrence_whose_lesson_is_in_the_store_is_caught(
    history: tuple[Path, Path], tmp_path: Path
) -> None:
    directory, labels = history
    (project,) = load_labels(labels).projects
    work = tmp_path / "work"
    # Worded like the failure, so that even injection by shared words (no failure recall)
    # shows it at the failing call.
    _seed(
        work,
        "Bash `python -m pytest tests/` fails with exit code 127, (eval):1: command not found: "
        "python. python is not on PATH here: run python3 -m pytest tests/ instead.",
    )
    figures = replay_project(directory, project, work)
    (outcome,) = figures.recurrences
    assert outcome.status in ("before", "failure"), outcome
    tally = figures.tally()
    assert tally.before + tally.at_failure == 1 and tally.missed == 0
    shown = [s for s in figures.sessions[1].shown().values() if "not on PATH here" in s.text]
    assert shown and all(s.relevant and "python-not-on-path" in s.matches for s in shown)


def test_a_recurrence_whose_lesson_is_not_in_the_store_is_missed(
    history: tuple[Path, Path], tmp_path: Path
) -> None:
    directory, labels = history
    # A lesson nothing in these sessions states: whatever the swarm learns from them cannot
    # match it, and the store holds only an unrelated lesson.
    unlearnable = tmp_path / "unlearnable.yaml"
    unlearnable.write_text(
        labels.read_text().replace(
            'match: [["python3", "command not found: python"], ["python3", "not on path"]]',
            'match: [["pyenv shim", "rehash"]]',
        )
    )
    assert "pyenv shim" in unlearnable.read_text()
    (project,) = load_labels(unlearnable).projects
    work = tmp_path / "work"
    _seed(work, "Deploys of the billing service need a manual cache flush with redis-cli.")
    figures = replay_project(directory, project, work)
    (outcome,) = figures.recurrences
    assert outcome.status == "missed"
    seeded = [s for s in figures.sessions[0].shown().values() if "billing" in s.text]
    assert all(not s.relevant for s in seeded)  # shown or not, no label marks it relevant


def test_labels_that_do_not_fit_the_files_are_refused(
    history: tuple[Path, Path], tmp_path: Path
) -> None:
    directory, _ = history
    wrong_line = tmp_path / "wrong-line.yaml"
    wrong_line.write_text(LABELS.replace(f"{SECOND}.jsonl, line: 3", f"{SECOND}.jsonl, line: 2"))
    with pytest.raises(
        ReplayLabelsError, match=r"line 2 of s2-python-again\.jsonl is not a failing"
    ):
        replay(directory, load_labels(wrong_line), work=tmp_path / "w1")
    reordered = tmp_path / "reordered.yaml"
    reordered.write_text(
        LABELS.replace(
            f"sessions: [{FIRST}.jsonl, {SECOND}.jsonl]",
            f"sessions: [{SECOND}.jsonl, {FIRST}.jsonl]",
        )
    )
    with pytest.raises(ReplayLabelsError, match="a recurrence must be in a later session"):
        load_labels(reordered)
    same_session = tmp_path / "same.yaml"
    same_session.write_text(LABELS.replace("split: held-apart", "split: tuned"))
    with pytest.raises(ReplayLabelsError, match="split: must be one of"):
        load_labels(same_session)


def test_consolidation_runs_only_when_the_schedule_fires_between_events() -> None:
    since = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    until = datetime(2026, 1, 6, 16, 0, tzinfo=UTC)
    nightly = {"n": ScheduleEntry(task="consolidation.nightly", cron="0 3 * * *")}
    assert consolidation_runs({}, since, until, origin=since) == []
    assert consolidation_runs(nightly, since, until, origin=since) == [
        datetime(2026, 1, 6, 3, 0, tzinfo=UTC)
    ]
    assert consolidation_runs(nightly, since, since.replace(hour=20), origin=since) == []
    other = {"x": ScheduleEntry(task="forge.close_loop", every=60)}
    assert consolidation_runs(other, since, until, origin=since) == []
    hourly = {"h": ScheduleEntry(task="consolidation.nightly", every=7200)}
    assert consolidation_runs(hourly, since.replace(minute=30), until, origin=since) == [
        datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    ]


def test_the_command_prints_the_figures_as_json(history: tuple[Path, Path]) -> None:
    directory, labels = history
    command = [sys.executable, "-m", "swarmq.cli", "eval", "replay"]
    args = ["--history", str(directory), "--labels", str(labels), "--json", "--verbose"]
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    overall = data["overall"]
    assert overall["recurrences"] == 1
    assert overall["caught_before"] + overall["caught_at_failure"] + overall["missed"] == 1
    assert data["by_split"]["held-apart"]["sessions"] == 2
    (project,) = data["projects"]
    assert project["recurrence_outcomes"][0]["mistake"] == "python-not-on-path"
    assert {i["kind"] for i in project["injections"]} >= {"first_request", "inject_failure"}
    bad = subprocess.run(
        [*command, "--history", str(directory), "--labels", str(labels), "--split", "x"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode != 0 and "--split must be one of" in bad.stderr


def test_label_parts_match_whole_tokens_only(tmp_path: Path) -> None:
    labels = tmp_path / "labels.yaml"
    labels.write_text(LABELS.replace('["python3", "not on path"]', '["ping", "not permitted"]'))
    (project,) = load_labels(labels).projects
    assert project.matching("`ping -c 2 host` failed: socket: Operation not permitted") == (
        "python-not-on-path",
    )
    assert project.matching("mapping_manager.py failed: Operation not permitted") == ()
    assert project.matching("run python3: command not found: python") == ("python-not-on-path",)


def test_a_stated_lesson_reaches_the_next_session_with_default_settings(
    history: tuple[Path, Path], tmp_path: Path
) -> None:
    """Issue 24 end to end on the fixture: nothing seeded, default roster, the sessions' clock."""
    directory, labels = history
    figures = replay(directory, load_labels(labels), work=tmp_path / "work")
    (outcome,) = figures.projects[0].recurrences
    assert outcome.status == "before", outcome
    assert outcome.learned and outcome.in_store


def test_a_long_failure_is_replayed_with_its_end_where_a_traceback_states_it(
    tmp_path: Path,
) -> None:
    frames = "".join(
        f'  File "lib/m{i}.py", line {i}, in f{i}\n    f{i + 1}()\n' for i in range(60)
    )
    last = "UnicodeEncodeError: 'gbk' codec can't encode character '\\u2705' in position 0"
    error = f"Exit code 1\nTraceback (most recent call last):\n{frames}{last}"
    lines = [
        _record("s", 0, "2026-01-05T10:00:00.000Z", "user", "Install the tool"),
        _record("s", 1, "2026-01-05T10:00:05.000Z", "assistant", _call("t1", "tool install")),
        _record("s", 2, "2026-01-05T10:00:06.000Z", "user", _result("t1", error, True)),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (failure,) = read_session(path).failures
    assert len(error) > 2500
    assert failure.text().startswith("$ tool install\nExit code 1\nTraceback")
    assert failure.text().endswith(last)
