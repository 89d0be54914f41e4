"""``swarmq.eval.forge_stages``: each missed tool-error lesson placed at the stage it is lost."""

from __future__ import annotations

from pathlib import Path

from swarmq.eval.forge_stages import render, stages
from tests.forge.sessions import ClaudeSession

LABELS = """version: 1
sessions:
  - file: s.jsonl
    format: claude-code
    split: held-out
    lessons:
      - lesson: python is missing here; python3 works.
        words: [python3]
        kind: tool-error
      - lesson: the widget service refuses the token (code W17).
        words: [w17]
        kind: tool-error
      - lesson: the deploy script needs the staging flag.
        words: [staging-flag-word]
        kind: tool-error
      - lesson: the team prefers small commits.
        words: [small commits]
"""


def test_every_missed_tool_error_lesson_gets_a_stage(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    (
        ClaudeSession()
        .user("run the report")
        .bash("python report.py", "Exit code 127\n/bin/bash: python: command not found", error=True)
        .bash("python3 report.py", "report written")
        .bash("widgetctl sync --all", "Exit code 1\nerror: token refused (W17)", error=True)
        .bash("git log --oneline | head -3", "abc123 first")
        .bash("git status", "clean")
        .bash("git diff --stat", "")
        .bash("ls", "report.py")
        .bash("ls -la", "report.py")
        .write(tmp_path / "sessions" / "s.jsonl")
    )
    path = tmp_path / "labels.yaml"
    path.write_text(LABELS, encoding="utf-8")
    out = stages([path])
    assert out.lessons == 3  # tool-error lessons only
    assert out.stages["kept"] == 1
    assert out.stages["given up"] == 1  # opened, nothing cured it, no fact in its error
    assert out.stages["no failing call"] == 1  # its words are in no tool traffic
    assert "given up" in render(out)
