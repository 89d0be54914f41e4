"""Two mechanisms of failed calls seen on several unseen users: a permission the session is never
given (Claude Code's "… but you haven't granted it yet", which every retry meets alike), and a
call that only reads, which cannot have cured a failure the same call then got past.

Small sessions written for these tests, in Claude Code's record shapes.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._envfacts import not_granted
from swarmq.forge._sequences import reads_only
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _contents

_SEARCH_REFUSED = "Claude requested permissions to use WebSearch, but you haven't granted it yet."
_WRITE_REFUSED = (
    "Claude requested permissions to write to /workspace/r/report.md, but you haven't granted "
    "it yet."
)


def test_the_permission_named_by_the_refusal() -> None:
    assert not_granted(_SEARCH_REFUSED) == "use WebSearch"
    assert not_granted(_WRITE_REFUSED) == "write"
    assert not_granted("The user doesn't want to proceed with this tool use.") == ""
    assert not_granted("Permission denied: /etc/shadow") == ""


def test_a_permission_never_granted_is_one_lesson_though_nothing_got_past_it(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("Research the mapping APIs and write the report to research/report.md")
        .bash("Mapbox vs Google Maps pricing 2026", _SEARCH_REFUSED, error=True, tool="WebSearch")
        .bash("Mapbox vs Google Maps pricing 2026", _SEARCH_REFUSED, error=True, tool="WebSearch")
        .say("Web search is not available; I will write the report from what I know.")
        .bash("# Report", _WRITE_REFUSED, error=True, tool="Write")
        .bash("# Report", _WRITE_REFUSED, error=True, tool="Write")
    )
    contents = _contents(session, tmp_path, layout)
    granted = [c for c in contents if "haven't granted it yet" in c]
    assert len(granted) == 1, contents
    assert "WebSearch" in granted[0] and "retrying does not help" in granted[0], granted


def test_reading_calls_are_told_from_calls_that_change_something() -> None:
    for call in (
        "cd /w/app && grep lz-string package.json",
        "cmd /c type .\\apps\\web\\page.tsx | more",
        "sed -n '1,80p' src/app.ts",
        "cat a.txt | wc -l",
    ):
        assert reads_only(call), call
    for call in (
        "npm install lz-string",
        "grep x a.txt > b.txt",
        "sed -i 's/a/b/' f.txt",
        "find . -name '*.pyc' -delete",
        "cd /w/app && npm run build 2>&1 | tail -30",
    ):
        assert not reads_only(call), call


def test_a_read_between_a_failure_and_its_working_retry_is_not_its_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    build = "cd /w/app && docker build -t app-test . 2>&1 | tail -30"
    session = (
        ClaudeSession()
        .user("build the image")
        .bash(build, "#16 14.12 > Build failed because of webpack errors", error=True)
        .bash("cd /w/app && grep lz-string package.json", '"lz-string": "^1.5.0",')
        .bash(build, "#20 naming to docker.io/library/app-test done")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("grep lz-string" in c for c in contents), contents


def test_a_change_between_a_failure_and_its_working_retry_is_still_its_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    build = "cd /w/app && docker build -t app-test . 2>&1 | tail -30"
    session = (
        ClaudeSession()
        .user("build the image")
        .bash(build, "#16 14.12 > Build failed because of webpack errors", error=True)
        .bash("cd /w/app && npm install lz-string", "added 1 package")
        .bash(build, "#20 naming to docker.io/library/app-test done")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "after `cd /w/app && npm install lz-string` the same call worked" in c for c in contents
    ), contents
