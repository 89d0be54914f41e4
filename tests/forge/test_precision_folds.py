"""Per-folder files, report sections and failures told twice (the 2026-12-05 fourth forge session).

The sessions are written in the shapes of the real ones in eval/forge/sessions: ``cat
package.json`` at a repository's root then ``cat frontend/package.json``, a Read of
``.vscode/settings.json`` one project too high, a summary's "What's Fixed" and "Tests" sections,
and the agent saying in its own words that the program whose call just failed is not installed.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._layout import relocation
from swarmq.forge._reports import is_change_report
from swarmq.forge._restated import failed_programs, restates
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, codex_old_rollout


def test_a_file_every_folder_has_found_in_another_folder_is_that_folders_own() -> None:
    assert relocation("package.json", "frontend/package.json") is None
    assert (
        relocation(
            "/Users/s/code/prod/agentcore/.vscode/settings.json",
            "/Users/s/code/prod/agentcore/05_swarm/.vscode/settings.json",
        )
        is None
    )
    assert relocation("main.py", "src/main.py") is None
    # a named folder in the shared tail, or a name not every folder has: the same file moved
    kept = relocation(
        "/Users/a/Desktop/app/memory/MEMORY.md", "/Users/a/.claude/projects/x/memory/MEMORY.md"
    )
    assert kept is not None and kept.tail == "memory/MEMORY.md"
    moved = relocation("architecture.md", "docs/architecture.md")
    assert moved is not None and moved.right == "docs"
    assert relocation("src/app/package.json", "packages/web/src/app/package.json") is not None


def test_cat_package_json_then_the_frontends_is_the_next_look(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "check the test scripts"),
            (
                "shell",
                (
                    ["bash", "-lc", "cat package.json"],
                    "cat: package.json: No such file or directory",
                    1,
                ),
            ),
            ("shell", (["bash", "-lc", "cat frontend/package.json"], '{"name": "web"}', 0)),
        ],
    )
    found = forge_transcript(path, layout, locks).found
    assert [c.content for c in found if "lives in" in c.content] == []


def test_a_reports_fixed_and_tests_sections_are_change_reports() -> None:
    assert is_change_report(
        "**CSS Generation Working**: Fixed by copying cssGenerator files to public-site package",
        "What's Fixed:",
    )
    assert is_change_report(
        "**`testBackupBoard_capturesCorrectState`** — Regression test for the main bug",
        "Tests (Test.js):",
    )
    assert is_change_report("Both runs pass", "Verification:")
    # "Fixed by …" outside a report section still states a cure
    assert not is_change_report("Fixed by copying cssGenerator files to public-site package")
    assert not is_change_report("Fixed by copying the generator", "Root cause:")


def test_the_summary_section_whats_fixed_yields_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("the export button fails")
        .say(
            "## Summary\n\n### ✅ What's Fixed\n\n"
            "1. **Old Directories Archived**: stale components moved to `.archive`\n"
            "2. **CSS Generation Working**: Fixed by copying cssGenerator files to "
            "public-site package\n"
        )
    )
    found = forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found
    assert not any("Fixed by copying" in c.content for c in found)


def test_which_sentences_restate_a_failed_program() -> None:
    failed = failed_programs(
        [
            "`ruby -e \"require 'yaml'\"` failed (/bin/bash: line 1: ruby: command not found); "
            "no retry worked.",
            '`PYTHONPATH="E:/x" python3 -c "import a"` failed (Exit code 49); …',
            "Never run the build on the server.",
        ]
    )
    assert failed == {"ruby", "python3"}
    assert restates("`ruby` isn’t installed in this workspace, so I’m switching to Node.", failed)
    assert restates("需要把 `python3` 改成 `python`（Windows 上不支持 `python3` 命令）。", failed)
    # another program, or something else said of the failed one: a lesson of its own
    assert not restates("`node` is not installed here.", failed)
    assert not restates("Run `ruby` through `bundle exec` so the Gemfile's versions load.", failed)
    assert not restates("`ruby` isn't installed", set())


def test_the_agents_word_that_a_failed_program_is_missing_folds_into_the_tool_error(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "validate the sprint status yaml"),
            (
                "shell",
                (
                    ["bash", "-lc", "ruby -e \"require 'yaml'; YAML.load_file('s.yaml')\""],
                    "/bin/bash: line 1: ruby: command not found",
                    127,
                ),
            ),
            (
                "assistant",
                "The file is written. `ruby` isn’t installed in this workspace, so I’m "
                "switching to Node for the YAML parse check.",
            ),
            (
                "shell",
                (["bash", "-lc", "node -e \"require('fs').readFileSync('s.yaml')\""], "", 0),
            ),
        ],
    )
    found = forge_transcript(path, layout, locks).found
    contents = [c.content for c in found]
    assert any(c.startswith("`ruby -e") for c in contents), contents
    assert not any("isn’t installed in this workspace" in c for c in contents), contents
