"""False candidates forge made on unseen users, by cause, not by session.

Small sessions written for these tests, in Claude Code's record shapes: the output of a command
the user ran with ``!`` (a ``git log`` whose commit subjects read like fixes) and a refusal that
another command of the same program, run beside it, is taken to have got past.
"""

from __future__ import annotations

import json
from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import reason_of
from swarmq.forge._restated import announces_escalation, failed_errors
from swarmq.forge.extract import forge_transcript
from swarmq.forge.templates import is_pasted_log
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _contents

_GIT_LOG = (
    "<bash-stdout>* 12d939e - (66 seconds ago) docs: Add the workflow notes - ann (HEAD -> main)\n"
    "* 2e5de86 - (55 minutes ago) feat: Add the specifications framework - ann\n"
    "* ed77663 - (3 weeks ago) fix: Update citation to use the correct BibTeX key - ann\n"
    "* cdbf03d - (4 months ago) fix: Clarify the project scope and its challenges - ann\n"
    "</bash-stdout><bash-stderr></bash-stderr>"
)


def test_a_git_log_is_machine_output() -> None:
    assert is_pasted_log(_GIT_LOG)
    assert is_pasted_log("a1b2c3d fix: the parser\n9f8e7d6 fix: the lexer\n0a1b2c3 add: docs\n")
    assert not is_pasted_log("I fixed it.\nThe deadbeef value is wrong.\nPlease check it.\n")


def test_the_output_of_a_users_git_log_is_no_lesson(tmp_path: Path, layout: AgentsLayout) -> None:
    session = ClaudeSession().user("<bash-input>git lg</bash-input>").user(_GIT_LOG)
    assert _contents(session, tmp_path, layout) == []


def test_another_command_of_the_program_does_not_get_past_a_refusal(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("make the feature branch")
        .bash(
            "git fetch --all --prune",
            "Exit code 255\nerror: cannot open '.git/FETCH_HEAD': Operation not permitted",
            error=True,
        )
        .bash(
            "git ls-remote --heads origin",
            "Exit code 128\nfatal: unable to access 'https://example.org/r.git/': "
            "Could not resolve host: example.org",
            error=True,
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert contents, contents
    assert not any("`git ls-remote --heads origin` worked instead" in c for c in contents), contents


def test_the_same_command_run_otherwise_still_gets_past_a_refusal(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash(
            "go test ./...",
            "Exit code 1\nopen /home/u/.cache/go-build/00/x: permission denied",
            error=True,
        )
        .bash(
            "GOCACHE=/tmp/go-build go test ./...",
            "Exit code 1\n--- FAIL: TestParse (0.00s)\n    parse_test.go:9: got 2, want 3",
            error=True,
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any("`GOCACHE=/tmp/go-build go test ./...` worked instead" in c for c in contents), (
        contents
    )


_LOCKED = "Exit code 128\nfatal: Unable to create '/r/.git/index.lock': Operation not permitted"


def test_the_agent_announcing_an_escalated_rerun_is_folded_into_the_refusal(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    for announcement in (
        "Staging failed because the sandbox cannot write `.git/index.lock`. I'm rerunning the "
        "commit with escalated permissions so I can update the git index.",
        "提交被沙箱拦住了，原因是无法写 `.git/index.lock`。我改为申请一次提权执行同样的 `git add` 和 `git commit`。",
    ):
        session = (
            ClaudeSession()
            .user("commit the templates")
            .bash("git add a.md && git commit -m 'docs: templates'", _LOCKED, error=True)
            .say(announcement)
        )
        contents = _contents(session, tmp_path, layout)
        assert len(contents) == 1 and contents[0].startswith("`git add a.md"), contents


def test_only_an_escalation_past_a_named_refusal_is_folded() -> None:
    errors = failed_errors(
        [
            "`git commit` failed (fatal: unable to create '/r/.git/index.lock': operation not "
            "permitted); `git` is refused here (sandbox or permissions)."
        ]
    )
    assert errors and announces_escalation(
        "Rerunning with escalated permissions: `.git/index.lock`.", errors
    )
    assert not announces_escalation(
        "The sandbox cannot write `.git/index.lock`, so hooks must run outside it.", errors
    )  # no escalation: what the agent concluded may be a lesson of its own
    assert not announces_escalation(
        "I'm rerunning with escalated permissions; `~/.cache/ms-playwright` is missing too.", errors
    )  # names something no failed call's error named


def test_a_user_asking_why_something_broke_is_a_symptom(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = ClaudeSession().user(
        "My vim suddenly broke...\nis it because I did a apt upgrade?\n"
        "or we changed something in this session"
    )
    assert _contents(session, tmp_path, layout) == []


def test_a_user_saying_what_broke_without_asking_stays(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = ClaudeSession().user(
        "The build broke because the lockfile was regenerated with npm 6; never regenerate it."
    )
    assert _contents(session, tmp_path, layout), "a statement of the user's is kept"


def test_a_helper_saying_the_program_it_needs_is_not_found_is_a_fact(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("find the timeline code")
        .bash(
            'omx explore --prompt "find the timeline component"',
            "Exit code 1\nError: [explore] cargo was not found. Install a Rust toolchain, or set "
            "OMX_EXPLORE_BIN to a prebuilt harness binary.",
            error=True,
        )
        .bash('rg -n "timeline" src', "src/DayPlanner.tsx:3: timeline")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        c.startswith("`omx explore") and "`cargo` is not installed here" in c for c in contents
    ), contents


def test_a_unittest_run_whose_tests_fail_is_the_codes_failure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    failing = (
        "Exit code 1\nEEEE\n"
        + "=" * 70
        + "\nERROR: test_shape (test_envelope.EnvelopeTests.test_shape)\n"
        + "-" * 70
        + "\nTraceback (most recent call last):\n"
        '  File "/w/tests/unit/test_envelope.py", line 20, in test_shape\n'
        "    response = error_response(\n"
        '  File "/w/src/envelope.py", line 9, in error_response\n'
        "    raise NotImplementedError\nNotImplementedError\n"
    )
    run = "cd /w && python3 -m unittest discover -s tests/unit -p 'test_*.py'"
    init = (
        'for f in /w/tests/__init__.py /w/tests/unit/__init__.py; do [ -f "$f" ] || : > "$f"; done'
    )
    session = (
        ClaudeSession()
        .user("write the tests first")
        .bash(run, failing, error=True)
        .bash(init, "")
        .bash(run, "....\nRan 4 tests\n\nOK")
    )
    assert _contents(session, tmp_path, layout) == []


def test_a_test_run_that_found_no_tests_is_cured_by_what_lets_it_find_them(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    root = "cd /w && python3 -m unittest discover -s tests -p 'test_*.py'"
    suite = "cd /w && python3 -m unittest discover -s tests/{} -p 'test_*.py'"
    init = (
        'for f in /w/tests/__init__.py /w/tests/unit/__init__.py; do [ -f "$f" ] || : > "$f"; done'
    )
    session = (
        ClaudeSession()
        .user("run the whole suite")
        .bash(
            root,
            "Exit code 5\n\n" + "-" * 70 + "\nRan 0 tests in 0.000s\n\nNO TESTS RAN",
            error=True,
        )
        .bash(init, "")
    )
    for name in ("unit", "contract", "integration", "e2e", "smoke"):  # checks, not other moves
        session.bash(suite.format(name), "....\nRan 4 tests in 0.001s\n\nOK")
    session.bash(root, "....\nRan 20 tests in 0.002s\n\nOK")
    contents = _contents(session, tmp_path, layout)
    assert contents == [f"`{root}` failed (NO TESTS RAN); after `{init}` the same call worked."], (
        contents
    )


def test_a_compiler_error_or_a_missing_program_run_again_is_no_refusal_from_outside(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    """A failure reported with no exit status is taken for a hook's or a gate's refusal when
    the same call then works; a compiler's diagnostic (the code was edited in between) or a
    missing program is the command's own error, so no candidate blames something outside it."""
    compiled = (
        ClaudeSession()
        .user("build the app")
        .bash(
            "npm run build",
            "src/App.tsx(1,1): error TS6133: 'useState' is declared but its value is never read.",
            error=True,
        )
        .call(
            "Edit",
            {"file_path": "/w/src/App.tsx", "old_string": "a", "new_string": "b"},
            "The file /w/src/App.tsx has been updated.",
        )
        .bash("npm run build", "vite v5.0.0 building for production...\n✓ built in 1.2s")
    )
    missing = (
        ClaudeSession()
        .user("which version is installed?")
        .bash("pip show requests", "(eval):1: command not found: pip", error=True)
        .bash("pip show requests", "Name: requests\nVersion: 2.32.3")
    )
    for session in (compiled, missing):
        contents = _contents(session, tmp_path, layout)
        assert not any("outside the command" in c for c in contents), contents


def test_a_gate_refusing_a_call_run_again_unchanged_is_still_the_lesson(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("set the index up")
        .bash(
            "codegraph init -i",
            "[Fact-Forcing Gate] state what this command does first",
            error=True,
        )
        .bash("codegraph init -i", "initialised 120 files")
    )
    contents = _contents(session, tmp_path, layout)
    assert any("outside the command" in c for c in contents), contents


def test_a_file_of_the_same_name_in_another_folder_is_no_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("what do the thumbnail routes do?")
        .bash(
            "sed -n '1,240p' app/api/thumbnail/asset/[...slug]/route.ts",
            "Exit code 1\nzsh:1: no matches found: app/api/thumbnail/asset/[...slug]/route.ts",
            error=True,
        )
        .bash("sed -n '1,220p' app/api/thumbnail/models/route.ts", "export async function GET")
        .bash(
            "sed -n '1,260p' 'app/api/thumbnail/asset/[...slug]/route.ts'",
            "export async function GET",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "`sed -n '1,260p' 'app/api/thumbnail/asset/[...slug]/route.ts'` worked instead" in c
        for c in contents
    ), contents
    assert not any("models/route.ts" in c for c in contents), contents


def test_a_powershell_listing_is_no_cure_but_a_failed_read_asked_rightly_is(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    script = 'powershell.exe -NoProfile -Command & ".specify/scripts/new-feature.ps1" -Json "x"'
    read = 'powershell -NoProfile -Command Get-Content -Raw "E:\\specs\\001\\spec.md"'
    session = (
        ClaudeSession()
        .user("make the feature")
        .bash(
            script,
            "Exit code 1\nC:\\p\\.specify\\scripts\\new-feature.ps1 : Usage: ./new-feature.ps1 "
            "[-Json] <feature description>\n(Microsoft.PowerShell.Commands.WriteErrorException)",
            error=True,
        )
        .bash("powershell.exe -NoProfile -Command Get-ChildItem .specify", "scripts\nmemory")
        .bash(
            read,
            'Exit code 1\nThe string is missing the terminator: ".\n'
            "(TerminatorExpectedAtEndOfString)",
            error=True,
        )
        .bash(
            "powershell -NoProfile -Command Get-Content -Raw -LiteralPath 'E:\\specs\\001\\spec.md'",
            "# Spec",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("Get-ChildItem .specify` worked instead" in c for c in contents), contents
    assert any("-LiteralPath 'E:\\specs\\001\\spec.md'` worked instead" in c for c in contents), (
        contents
    )


def test_a_call_refused_in_turn_did_not_get_past_a_usage_error(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    usage = "\n\nUsage: uv python [OPTIONS] <COMMAND>\n\nFor more information, try '--help'."
    session = (
        ClaudeSession()
        .user("which mcp client do we have?")
        .bash(
            'uv python -c "import mcp"',
            f"Exit code 2\nerror: unexpected argument '-c' found{usage}",
            error=True,
        )
        .bash(
            'uv python3 -c "import mcp"',
            "Exit code 2\nerror: unrecognized subcommand 'python3'\n\n  tip: a similar subcommand "
            "exists: 'python'\n\nUsage: uv [OPTIONS] <COMMAND>",
            error=True,
        )
        .bash('python -c "import mcp"', "['ClientSession']")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any('`uv python3 -c "import mcp"` worked instead' in c for c in contents), contents
    assert contents, contents


def test_another_subcommand_of_the_failed_program_is_no_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("log in to GitHub and clone the site")
        .bash("~/bin/gh auth login", "Command timed out after 2m 0.0s", error=True)
        .bash("git init && ~/bin/gh repo clone someone/site", "Cloning into 'site'...")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("gh repo clone someone/site` worked instead" in c for c in contents), contents


def test_the_same_call_without_its_cd_after_an_install_names_the_install(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("the project has an error")
        .bash(
            "cd /home/u/app && npm run build",
            "Exit code 1\nerror during build:\n[vite:css] [postcss] It looks like you're trying to use 'tailwindcss' "
            "directly as a PostCSS plugin. The PostCSS plugin has moved to a separate package",
            error=True,
        )
        .bash("cd /home/u/app && npm install @tailwindcss/postcss", "added 12 packages")
        .bash("npm run build", "✓ built in 1.2s")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "after `cd /home/u/app && npm install @tailwindcss/postcss` the same call worked" in c
        for c in contents
    ), contents


def test_the_failed_chains_own_subcommand_in_a_later_chain_is_still_a_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash(
            "pip install pytest -q && python -m pytest tests/ -q",
            "Exit code 1\nerror: externally-managed-environment\n\n× This environment is "
            "externally managed",
            error=True,
        )
        .bash(
            "python3 -m venv .venv && source .venv/bin/activate && pip install -q pytest",
            "Successfully installed pytest-8.3.0",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any("python3 -m venv .venv" in c and "worked instead" in c for c in contents), contents


def test_a_chain_ending_in_a_failing_verbose_test_run_is_the_codes_failure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    progress = "\n".join(
        f"tests/test_c.py::TestC::test_parse_{n}_invalid PASSED [{n:3d}%]" for n in range(1, 60)
    )
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash(
            "cd ~/app && source .venv/bin/activate && pip install -q feedparser && "
            "python -m pytest tests/ -v 2>&1",
            f"Exit code 1\n{progress}\ntests/test_c.py::TestC::test_rss FAILED [ 99%]\n"
            "=========== 1 failed, 59 passed in 2.10s ===========",
            error=True,
        )
        .bash(
            "cd ~/app && source .venv/bin/activate && python -m pytest tests/ -v 2>&1 | tail -30",
            "1 failed",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("PASSED" in c for c in contents), contents
    assert not any("worked instead" in c for c in contents), contents


def test_a_compaction_summarys_record_sections_are_not_mined(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    summary = (
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below:\n\nAnalysis:\n1. Primary Request and Intent:\n"
        "   The user wants the weekly report sent by mail.\n\n2. Key decisions:\n"
        "- Decided to keep SQLite as the store instead of Postgres, because the Pi has 1 GB.\n\n"
        "4. Errors and fixes:\n"
        "   - **Missing click**: CLI failed. Fixed by installing: `pip install click`\n\n"
        "Errors encountered:\n"
        "- Test failing for `_determine_text_type` - fixed by prioritizing keywords by position\n\n"
        "9. Optional Next Step:  The next step is to fix the remaining failing test.\n"
    )
    contents = _forged_summary(summary, tmp_path, layout)
    assert not any("Fixed by installing" in c or "fixed by prioritizing" in c for c in contents)
    assert not any("next step" in c.lower() for c in contents), contents
    assert any("SQLite" in c for c in contents), contents


def test_a_reports_opening_line_is_no_cause() -> None:
    report = (
        "基于以上全面的代码分析，我现在可以为您提供详细的项目健康度评估报告：\n"
        "# 项目健康度评估报告\n## 总体健康度评分：6.5/10"
    )
    assert reason_of(report) == ""
    assert reason_of("The build fails because the lock file is stale.\nNext I will…") == (
        "The build fails because the lock file is stale."
    )


def test_a_timed_out_search_made_smaller_names_the_smaller_one(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("count the TODOs in the project")
        .bash(
            'find /src/app -name "*.java" -exec grep -l "TODO" {} \\; | wc -l',
            "Command timed out after 2m 0.0s",
            error=True,
        )
        .bash(
            'grep -r "TODO" /src/app/modules --include="*.java" | head -10',
            "/src/app/modules/a/B.java: // TODO: roles",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "timed out" in c and 'grep -r "TODO" /src/app/modules' in c and "no retry" not in c
        for c in contents
    ), contents


def test_the_shell_that_wrapped_a_timed_out_call_is_not_its_smaller_job(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("find the sheet id")
        .bash(
            'powershell.exe -NoProfile -Command rg -n "SHEET_ID" -S | select -First 50',
            "Command timed out after 2m 0.0s",
            error=True,
        )
        .bash(
            "powershell.exe -NoProfile -Command $env:API_URL='http://127.0.0.1:5678'; Get-Date",
            "Monday",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("API_URL" in c for c in contents), contents


def test_a_missing_interpreters_stand_in_on_the_same_file_is_named(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    script = (
        "python - <<'PY'\nfrom pathlib import Path\nimport re\n"
        "p=Path('/Users/u/proj/specs/001-sync/checklists/requirements.md')\n"
        "lines=p.read_text().splitlines()\n"
        "print(sum(1 for l in lines if re.match(r'- \\[( |x|X)\\]', l)))\nPY"
    )
    awk = (
        "awk 'BEGIN{t=0;c=0;i=0} /^- \\[[ xX]\\]/{t++} /^- \\[[xX]\\]/{c++} "
        "/^- \\[ \\]/{i++} END{print t, c, i}' "
        "/Users/u/proj/specs/001-sync/checklists/requirements.md"
    )
    session = (
        ClaudeSession()
        .user("check the checklist")
        .bash(script, "Exit code 127\nzsh:1: command not found: python", error=True)
        .bash(awk, "16 16 0")
    )
    contents = _contents(session, tmp_path, layout)
    assert any("command not found: python" in c and "awk 'BEGIN{t=0" in c for c in contents), (
        contents
    )


def test_a_refused_push_says_why_by_its_refs_line() -> None:
    from swarmq.forge._calls import error_excerpt

    output = (
        "Exit code 1\nTo github.com:u/r.git\n ! [rejected]        main -> main (stale info)\n"
        "error: failed to push some refs to 'github.com:u/r.git'\n"
    )
    assert "main -> main (stale info)" in error_excerpt(output)
    hooked = (
        "To github.com:u/r.git\n ! [remote rejected] main -> main (pre-receive hook declined)\n"
        "error: failed to push some refs to 'github.com:u/r.git'\n"
    )
    assert "(pre-receive hook declined)" in error_excerpt(hooked)
    told = (
        "remote: error: GH013: Repository rule violations found\nTo github.com:u/r.git\n"
        " ! [remote rejected] main -> main (push declined due to repository rule violations)\n"
        "error: failed to push some refs to 'github.com:u/r.git'\n"
    )
    assert "GH013: Repository rule violations found" in error_excerpt(told)  # its own words


def test_a_model_providers_passing_failure_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    hiccup = (
        'API Error: 500 {"type":"error","error":{"type":"api_error",'
        '"message":"Internal server error"}}'
    )
    lasting = 'API Error: 400 {"error":{"message":"The requested model is not supported."}}'
    session = ClaudeSession().user("go on").say(hiccup).user("go on").say(lasting)
    contents = _contents(session, tmp_path, layout)
    assert not any("Internal server error" in c for c in contents), contents
    assert any("The requested model is not supported" in c for c in contents), contents


def test_a_call_that_printed_its_own_failure_verdict_cured_nothing(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    refused = "fatal: could not read Username for 'https://github.com': No such device or address"
    session = (
        ClaudeSession()
        .user("deploy it")
        .bash("git push origin main", f"Exit code 128\n{refused}", error=True)
        .bash("git remote -v", "origin\thttps://github.com/u/r.git (fetch)")
        .bash(
            'git push origin main 2>&1 || echo "Push failed - authentication required"',
            f"{refused}\nPush failed - authentication required",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("worked instead" in c for c in contents), contents


def test_an_echo_after_probes_is_their_answer_not_a_failure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("install the sdk")
        .bash(
            "pip install mcp",
            "Exit code 127\n/bin/bash: line 1: pip: command not found",
            error=True,
        )
        .bash(
            'which python3 && python3 --version || echo "checking alternatives..."',
            "/usr/bin/python3\nPython 3.12.3\nchecking alternatives...",
        )
        .bash("python3 -m pip install mcp", "Successfully installed mcp-1.2.0")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("checking alternatives" in c for c in contents), contents


def test_cmd_started_with_only_its_banner_ran_nothing_and_powershell_did_the_job(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    refused = (
        "Exit code 1\nERROR: Invalid argument/option - 'F:/'.\nType \"TASKKILL /?\" for usage."
    )
    session = (
        ClaudeSession()
        .user("free port 3006")
        .bash("taskkill /F /PID 28288", refused, error=True)
        .bash(
            "cmd /c taskkill /F /PID 28288",
            "Microsoft Windows [Version 10.0.26100.4946]\n(c) Microsoft Corporation. All rights "
            "reserved.\n\nC:\\Users\\u\\app>",
        )
        .bash('powershell "Stop-Process -Id 28288 -Force"', "")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "taskkill /F /PID 28288` failed" in c
        and '`powershell "Stop-Process -Id 28288 -Force"` worked instead' in c
        for c in contents
    ), contents
    assert not any("`cmd /c taskkill /F /PID 28288` worked" in c for c in contents), contents


def test_a_call_that_works_after_an_edit_was_not_refused_from_outside(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    refused = (
        'Error: /Users/u/deck/slide2.html: Text box "Results" ends too close to bottom edge '
        '(0.48" from bottom, minimum 0.5" required)'
    )
    session = (
        ClaudeSession()
        .user("make the slides")
        .bash('NODE_PATH="$(npm root -g)" node generate-ppt.js 2>&1', refused, error=True)
        .call(
            "Edit",
            {"file_path": "/Users/u/deck/slide2.html", "old_string": "pb-8", "new_string": "pb-16"},
            "The file /Users/u/deck/slide2.html has been updated.",
        )
        .bash('NODE_PATH="$(npm root -g)" node generate-ppt.js 2>&1', "Wrote deck.pptx")
    )
    contents = _contents(session, tmp_path, layout)
    assert not any("outside the command" in c for c in contents), contents


def test_a_compaction_summarys_bold_record_sections_are_not_mined(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    summary = (
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below:\n\nAnalysis:\n1. **Primary Request and Intent:**\n"
        "   The user wants the blur benchmark verified.\n\n2. **Key decisions:**\n"
        "- Decided to keep OpenCV as the backend instead of PIL, because PIL is 4x slower.\n\n"
        "4. **Errors and Fixes:**\n"
        "   - **Initial inflated claims**: Claimed 19,300 FPS, actually 1,683 FPS - Fixed by "
        "measuring actual performance, not theoretical\n\n"
        "9. **Optional Next Step:**\n   Run the exhaustive test again.\n"
    )
    contents = _forged_summary(summary, tmp_path, layout)
    assert not any("inflated claims" in c for c in contents), contents
    assert any("OpenCV" in c for c in contents), contents


def test_a_checks_own_verdict_is_the_error_not_a_finding_that_says_error() -> None:
    from swarmq.forge._calls import error_excerpt

    output = (
        "Exit code: 1\nWall time: 1.8 seconds\nOutput:\nFAIL: Found placeholder/stub markers:\n"
        "src/net/Server.cpp:5:    // stub implementation of the protocol\n"
        "src/net/Server.cpp:195:    // stub implementation error sending\n"
    )
    excerpt = error_excerpt(output)
    assert excerpt.startswith("FAIL: Found placeholder/stub markers:"), excerpt
    assert "Server.cpp:5:" in excerpt  # its first finding, as the example
    go = "# ./...\npattern ./...: open /home/u/.cache/go-build/x: permission denied\nFAIL\n"
    assert "; FAIL" not in error_excerpt(go)  # a bare verdict word says nothing


def test_ssh_lacking_a_password_helper_is_not_what_failed() -> None:
    from swarmq.forge._calls import error_excerpt

    output = (
        "ssh_askpass: exec(/usr/lib/ssh/ssh-askpass): No such file or directory\n"
        "Host key verification failed.\nfatal: Could not read from remote repository.\n"
    )
    assert error_excerpt(output).startswith("Host key verification failed.")


def test_an_api_status_line_is_followed_by_why() -> None:
    from swarmq.forge._calls import error_excerpt

    output = (
        "HTTP 404: Not Found (https://api.github.com/user/keys?per_page=100)\n"
        'This API operation needs the "admin:public_key" scope. To request it, run:  gh auth '
        "refresh -h github.com -s admin:public_key"
    )
    assert 'needs the "admin:public_key" scope' in error_excerpt(output)


def test_advice_followed_right_after_the_failure_came_again_is_its_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    refused = (
        "Exit code 1\nHTTP 404: Not Found (https://api.github.com/user/keys?per_page=100)\n"
        'This API operation needs the "admin:public_key" scope. To request it, run:  gh auth '
        "refresh -h github.com -s admin:public_key"
    )
    session = (
        ClaudeSession()
        .user("add my ssh key with gh")
        .bash('gh ssh-key add ~/.ssh/id_ed25519.pub --title "dotfiles-key"', refused, error=True)
        .bash("gh auth refresh -h github.com -s admin:public_key", "Interrupted", error=True)
        .user("call it arch_from_office")
        .bash(
            'gh ssh-key add ~/.ssh/id_ed25519.pub --title "arch_from_office"', refused, error=True
        )
        .bash(
            "gh auth refresh -h github.com -s admin:public_key",
            "! First copy your one-time code: BD62-A85A\n✓ Authentication complete.",
        )
        .bash(
            'gh ssh-key add ~/.ssh/id_ed25519.pub --title "arch_from_office"',
            "✓ Public key added to your account",
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "HTTP 404" in c
        and "gh auth refresh -h github.com -s admin:public_key" in c.split(")", 1)[-1]
        for c in contents
    ), contents


def test_the_agents_web_fetch_of_the_same_url_stands_in_for_a_missing_curl(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    url = "https://app.example.dev/.well-known/manifest.json"
    session = (
        ClaudeSession()
        .user("is the manifest served?")
        .bash(
            f'curl -s -o /dev/null -w "%{{http_code}}" "{url}"',
            "Exit code 127\n/bin/bash: line 1: curl: command not found",
            error=True,
        )
        .call("WebFetch", {"url": url, "prompt": "Return the HTTP status"}, "HTTP 200, valid")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "curl: command not found" in c and f"`WebFetch {url}` worked instead" in c for c in contents
    ), contents


def test_a_missing_subcommand_names_the_program_it_was_asked_of() -> None:
    from swarmq.forge._envfacts import environment_fact

    railway = environment_fact(
        "npx",
        "error: unrecognized subcommand 'projects'",
        "RAILWAY_TOKEN=x npx @railway/cli projects",
    )
    assert railway == "the `@railway/cli` installed here has no `projects` command"
    uv = environment_fact(
        "source",
        "error: unrecognized subcommand 'python3'",
        'source .venv/bin/activate && uv python3 -c "import mcp"',
    )
    assert uv == "the `uv` installed here has no `python3` command"


def _forged_summary(summary: str, tmp_path: Path, layout: AgentsLayout) -> list[str]:
    """What forge finds in a session holding only a Claude Code compaction summary."""
    record = {
        "type": "user",
        "isCompactSummary": True,
        "sessionId": "s1",
        "uuid": "u1",
        "timestamp": "2026-03-02T09:40:00.500Z",
        "message": {"role": "user", "content": summary},
    }
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return [c.content for c in forge_transcript(path, layout, LocalLocks(tmp_path / "locks")).found]
