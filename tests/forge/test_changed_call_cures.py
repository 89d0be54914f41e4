"""A failed call cured by a changed call of the same program (issue 24, generalisation): found
whatever words the error used, through three general mechanisms of the miner:

* a non-zero exit whose message uses no failure word forge knows is opened for one cure only:
  the same program on the same target with its arguments changed, working; with no such call
  (or the same command merely piped into a viewer) it stays an answer;
* an edit the tool refused, followed by an edit of the same file that worked: the refused
  content was the cause; an edit whose anchor text did not fit the file is the agent's slip.

The sessions are written for these tests in the shapes of real ones (Claude Code); names and
paths are invented.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, sequences


def test_an_unworded_failure_is_cured_by_the_same_program_with_changed_arguments(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("convert the report")
        .bash(
            "reportgen --format=xml data/sales.csv",
            "Exit code 2\nOnly json and csv output are supported by this build.",
            error=True,
        )
        .bash("reportgen --format=json data/sales.csv", "wrote data/sales.json")
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "Only json and csv output" in found[0]
    assert found[0].endswith("`reportgen --format=json data/sales.csv` worked instead.")


def test_an_unworded_failure_with_no_changed_cure_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("set it up")
        .bash("./setup 2>&1", "Exit code 1\nBuilding browse binary...", error=True)
        .bash("./setup 2>&1 | tail -50", "Building browse binary...\nready")  # a viewer piped
        .bash("mkdir -p build && touch build/.keep", "")  # another program: the task's work
    )
    assert sequences(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_an_edit_refused_then_the_same_file_edited_otherwise_names_the_refusal(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    settings = "/home/dev/.claude/settings.json"
    session = (
        ClaudeSession()
        .user("silence the IDE extension warning")
        .call(
            "Edit",
            {"file_path": settings, "old_string": "{", "new_string": '{"skipIdeCheck": true,'},
            "Settings validation failed:\n- : Unrecognized field: skipIdeCheck",
            error=True,
        )
        .call(
            "Edit",
            {"file_path": settings, "old_string": "{", "new_string": '{"env": {},'},
            f"The file {settings} has been updated successfully.",
        )
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert len(found) == 1
    assert "Unrecognized field: skipIdeCheck" in found[0]
    assert "the same file edited again with other content worked" in found[0]


def test_an_edit_whose_own_text_did_not_fit_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = "/srv/app/src/Risk.tsx"
    session = (
        ClaudeSession()
        .user("rename the prop")
        .call(
            "Edit",
            {"file_path": path, "old_string": "a", "new_string": "a"},
            "<tool_use_error>No changes to make: old_string and new_string are exactly the "
            "same.</tool_use_error>",
            error=True,
        )
        .call(
            "Edit",
            {"file_path": path, "old_string": "a", "new_string": "b"},
            f"The file {path} has been updated successfully.",
        )
    )
    assert sequences(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_a_line_the_command_echoes_or_a_listed_path_is_no_unworded_error(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("check the endpoints")
        .bash(
            'echo "=== CORS check ===" && curl -s -i -X OPTIONS http://127.0.0.1:8000/api/chat',
            "Exit code 7\n=== CORS check ===",
            error=True,
        )
        .bash('echo "=== CORS check ===" && curl -s http://127.0.0.1:8000/api/chat', "{}")
        .bash("rg --files -g '*prd*.md' out docs", "Exit code 2\nout/prd/plan-prd.md", error=True)
        .bash("rg --files -g '*.md' out", "out/prd/plan-prd.md")
    )
    assert sequences(session.write(tmp_path / "s.jsonl"), layout, locks) == []


def test_an_edit_refused_for_where_it_writes_is_not_blamed_on_its_content(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = "/srv/app/.codex/skills/lint/SKILL.md"
    session = (
        ClaudeSession()
        .user("add the lint skill")
        .call(
            "Write",
            {"file_path": path, "content": "---\nname: lint\n---\n"},
            f"Failed to create parent directories for {path}",
            error=True,
        )
        .call(
            "Write",
            {"file_path": path, "content": "---\nname: lint\n---\nRun ruff.\n"},
            f"File created successfully at: {path}",
        )
    )
    found = sequences(session.write(tmp_path / "s.jsonl"), layout, locks)
    assert not any("the refused content was the cause" in f for f in found)
