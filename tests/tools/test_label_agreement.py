"""``tools/label_agreement.py``: the labels' own sentences judged by their own words, and two
labellings judged by each other, with the scorer ``swarmq eval forge`` uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.forge.sessions import ClaudeSession

TOOL = Path(__file__).resolve().parents[2] / "tools" / "label_agreement.py"


def _labels(
    folder: Path, name: str, lessons: list[dict[str, object]], session_file: str = "s.jsonl"
) -> Path:
    """A labels file of one session; the session file ``session_file`` under ``sessions/`` is
    written as a stub unless the test wrote it."""
    (folder / "sessions").mkdir(exist_ok=True)
    stub = folder / "sessions" / session_file
    if not stub.exists():
        stub.write_text("{}\n", encoding="utf-8")
    path = folder / name
    session = {
        "file": session_file,
        "format": "claude-code",
        "repo": "u/r",
        "split": "held-out",
        "lessons": lessons,
    }
    path.write_text(yaml.safe_dump({"version": 1, "sessions": [session]}), encoding="utf-8")
    return path


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


_SAYS_IT = {
    "lesson": "`rg` is missing here (zsh: command not found: rg); use grep -R.",
    "words": ["command not found: rg", "grep -R"],
}
_ASKS_MORE = {
    "lesson": "The build runs past the tool's limit; check the class files instead.",
    "words": ["Command timed out after 2m", "253 class files"],
}


def test_a_lesson_whose_words_its_sentence_lacks_is_counted(tmp_path: Path) -> None:
    path = _labels(tmp_path, "labels-a.yaml", [_SAYS_IT, _ASKS_MORE])
    out = _run("self", str(path))
    assert "labels-a.yaml" in out and "1/2" in out, out


def test_two_labellings_are_judged_by_each_others_words(tmp_path: Path) -> None:
    first = _labels(tmp_path, "labels-a.yaml", [_SAYS_IT, _ASKS_MORE])
    second = _labels(tmp_path, "labels-b.yaml", [_SAYS_IT])
    out = _run("pair", str(first), str(second)).splitlines()
    # the second's one lesson is the first's first: found, the first's second missed
    assert out[0].startswith("second's lessons judged by the first's words (sentence alone): 1/0/1")
    # the first's two lessons judged by the second's one: one found, one extra
    assert out[2].startswith("first's lessons judged by the second's words (sentence alone): 1/1/0")
    assert out[3].endswith("P 0.50, R 1.00"), out


def test_a_labels_file_it_cannot_read_is_named(tmp_path: Path) -> None:
    path = tmp_path / "labels-x.yaml"
    path.write_text("version: 1\nsessions: [{file: gone.jsonl}]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(TOOL), "self", str(path)], capture_output=True, text=True
    )
    assert (
        done.returncode == 1 and "labels-x.yaml" in done.stderr and "Traceback" not in done.stderr
    )


def _forge_labels(folder: Path, name: str, lessons: list[dict[str, object]]) -> Path:
    return _labels(folder, name, lessons, "a.jsonl")


def test_forge_candidates_are_judged_by_each_labelling_and_by_either(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    (
        ClaudeSession("a")
        .user("migrate")
        .bash("python migrate.py", "Exit code 127\npython: command not found", error=True)
        .bash("python3 migrate.py", "done")
        .say("Root cause: the deploy crashed because `python` on the runner cannot run Python 3.")
        .user("ok, go on")
        .write(tmp_path / "sessions" / "a.jsonl")
    )
    python3 = {"lesson": "python is missing; use python3.", "words": ["python3"]}
    runner = {"lesson": "The runner's python cannot run Python 3.", "words": ["runner"]}
    first = _forge_labels(tmp_path, "labels-a.yaml", [{**python3, "kind": "tool-error"}])
    second = _forge_labels(tmp_path, "labels-b.yaml", [python3, runner])
    counts = json.loads(_run("forge", str(first), str(second), "--json"))
    # two candidates: the python3 fix (both labellings keep it) and the runner's limit (only
    # the second keeps it): by the first alone one is false, by either neither is
    assert counts["first"] == {"tp": 1, "fp": 1, "fn": 0, "te": 1, "te_all": 1}
    assert counts["second"] == {"tp": 2, "fp": 0, "fn": 0, "te": 0, "te_all": 0}
    assert counts["either"]["tp"] == 2 and counts["either"]["fp"] == 0
    text = _run("forge", str(first), str(second))
    assert "either  P 1.00" in text and "first   P 0.50" in text, text


def test_forge_refuses_a_second_labelling_without_a_session_of_the_first(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    ClaudeSession("a").user("hi").write(tmp_path / "sessions" / "a.jsonl")
    first = _forge_labels(tmp_path, "labels-a.yaml", [{"lesson": "hi", "words": ["hi"]}])
    second = tmp_path / "labels-b.yaml"
    second.write_text(yaml.safe_dump({"version": 1, "sessions": []}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(TOOL), "forge", str(first), str(second)],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "no labels for a.jsonl" in done.stderr, done.stderr


def test_forge_pools_several_splits_and_counts_each(tmp_path: Path) -> None:
    folders = []
    for name in ("a", "b"):
        folder = tmp_path / name
        (folder / "sessions").mkdir(parents=True)
        (
            ClaudeSession(name)
            .user("migrate")
            .bash("python migrate.py", "Exit code 127\npython: command not found", error=True)
            .bash("python3 migrate.py", "done")
            .write(folder / "sessions" / "a.jsonl")
        )
        python3 = {"lesson": "python is missing; use python3.", "words": ["python3"]}
        first = _forge_labels(folder, "labels-a.yaml", [{**python3, "kind": "tool-error"}])
        second = _forge_labels(folder, "labels-b.yaml", [python3])
        folders += [str(first), str(second)]
    pooled = json.loads(_run("forge", *folders, "--json"))
    assert pooled["first"] == {"tp": 2, "fp": 0, "fn": 0, "te": 2, "te_all": 2}
    assert pooled["either"]["tp"] == 2
    text = _run("forge", *folders)
    assert text.count("labels-a.yaml") == 2 and "pooled" in text, text
    odd = subprocess.run(
        [sys.executable, str(TOOL), "forge", *folders[:3]], capture_output=True, text=True
    )
    assert odd.returncode != 0 and "in pairs" in odd.stderr, odd.stderr
