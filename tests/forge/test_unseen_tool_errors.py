"""Tool-error lessons forge missed on unseen users, by mechanism, not by session.

Small sessions written for these tests, in the record shapes of Claude Code's Bash and
PowerShell tools: a call a hook refuses until it is run again, a failure that repeats until
files are moved out of its way, a missing dependency that an install cures, a program or a
sandbox that cannot start (in any display language), and a cause printed far down a long log.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt
from swarmq.forge._envfacts import environment_fact
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _contents

_GATE = (
    "[Review Gate]\n\nBefore the first Bash command this session, state what it does.\n\n"
    "Then retry the same operation."
)


def test_a_call_refused_with_no_exit_status_then_run_again_is_a_gate(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("set up the tool")
        .bash("cd /w && tool init --fast 2>&1; which tool", _GATE, error=True)
        .say("It builds the index of the project.")
        .bash("tool init --fast; which tool", "indexed 120 files\n/usr/bin/tool")
    )
    contents = _contents(session, tmp_path, layout)
    assert len(contents) == 1
    assert "[Review Gate]" in contents[0] and "a hook, a gate" in contents[0]


def test_a_rerun_after_a_timeout_or_an_exit_status_is_no_gate(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("run the job")
        .bash("make slow-job", "Command timed out after 2m 0s", error=True)
        .bash("make slow-job", "done")
        .bash("make other-job", "Exit code 2\nmake: *** [other-job] Error 2", error=True)
        .bash("make other-job", "done")
    )
    assert not any("a hook, a gate" in c for c in _contents(session, tmp_path, layout))


def test_a_failure_repeated_until_files_are_moved_is_cured_by_the_move(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    blocked = (
        "Exit code 1\nerror: Your local changes to the following files would be overwritten "
        "by merge:\n\t.claude/settings.local.json\nPlease commit your changes or stash them."
    )
    session = ClaudeSession().user("merge the feature branch")
    session.bash("git merge feat", blocked, error=True)
    for attempt in ("git stash", "git reset --hard HEAD", "git restore .", "git checkout ."):
        session.bash(attempt, "ok").bash("git status", "On branch main")
    session.bash("git merge feat", blocked, error=True)  # given up on, then met again
    session.bash("mv .claude/settings.local.json /tmp/settings.backup", "")
    session.bash("git merge feat", "Updating 59ae97c..2297e9d\nFast-forward")
    contents = _contents(session, tmp_path, layout)
    assert any(
        "would be overwritten by merge" in c
        and "after `mv .claude/settings.local.json /tmp/settings.backup` the same call worked" in c
        for c in contents
    ), contents


def test_an_install_that_gets_the_same_command_past_a_missing_dependency_is_its_cure(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    missing = (
        "Exit code 1\nbundler: failed to load command: rails (/r/bin/rails)\n"
        "/r/lib/ruby/3.4.0/bundler/definition.rb:697:in 'Bundler::Definition#materialize': "
        "Could not find aws-sdk-s3-1.208.0 in locally installed gems (Bundler::GemNotFound)"
    )
    session = (
        ClaudeSession()
        .user("find a recent record")
        .bash('DISABLE_SPRING=1 bundle exec rails runner "puts Case.first.id"', missing, error=True)
        .bash("bundle install 2>&1 | tail -3", "Bundle complete! 156 Gemfile dependencies")
        .bash(
            'DISABLE_SPRING=1 bundle exec rails runner "puts Case.last.name"',
            "Exit code 1\n/r/app/models/case.rb:3:in 'name': undefined method (NoMethodError)",
            error=True,
        )
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "Bundler::GemNotFound" in c and "after `bundle install" in c and "got past" in c
        for c in contents
    ), contents


def test_an_install_before_another_command_is_no_cure(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("check the browser library")
        .bash(
            'python -c "import playwright"',
            "Exit code 1\nModuleNotFoundError: No module named 'playwright'",
            error=True,
        )
        .bash("python -m pip install playwright", "Successfully installed playwright-1.50.0")
        .bash("python main.py", "Exit code 1\nValueError: bad config (main.py:3)", error=True)
    )
    assert not any("got past" in c for c in _contents(session, tmp_path, layout))


def test_a_cause_printed_below_a_long_log_is_read(tmp_path: Path, layout: AgentsLayout) -> None:
    log = "".join(
        f"  - <launching> step {n}: waiting for the browser to start\n" for n in range(40)
    )
    output = (
        f"Exit code 1\nSmoke test failed: BrowserType.launch: browser has been closed\n{log}"
        "[err] /root/.cache/chrome-headless-shell: error while loading shared libraries: "
        "libgbm.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert output.index("libgbm") > 2000
    session = (
        ClaudeSession()
        .user("run the smoke test")
        .bash("python tests/smoke.py --url http://127.0.0.1:8501", output, error=True)
        .bash("python -m playwright install-deps chromium", "Setting up libgbm1 ...")
        .bash("python tests/smoke.py --url http://127.0.0.1:8501", "smoke test passed")
    )
    contents = _contents(session, tmp_path, layout)
    assert any(
        "libgbm.so.1" in c and "after `python -m playwright install-deps chromium`" in c
        for c in contents
    ), contents


def test_a_program_windows_will_not_start_is_told_in_any_language(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    refused = (
        "Exit code 1\nLe programme « rg.exe » n’a pas pu s’exécuter : Accès refuséAu caractère "
        "Ligne:2 : 1\r\n+ rg --files App Core\r\n+ ~~~~~~~~~~~~~~~~~~~.\r\nAu caractère "
        "Ligne:2 : 1\r\n+ rg --files App Core\r\n+ ~~~~~~~~~~~~~~~~~~~\r\n    + CategoryInfo"
        "          : ResourceUnavailable: (:) [], ApplicationFailedException\r\n    + "
        "FullyQualifiedErrorId : NativeCommandFailed\r\n"
    )
    excerpt = error_excerpt(refused)
    assert excerpt == (
        "Le programme « rg.exe » n’a pas pu s’exécuter : Accès refusé (NativeCommandFailed)"
    )
    assert "cannot be started here" in environment_fact("rg", excerpt, "rg --files App Core")
    session = (
        ClaudeSession()
        .user("list the sources")
        .bash("rg --files App Core", refused, error=True, tool="PowerShell")
        .bash("Get-ChildItem -LiteralPath App -Force", "Name\n----\nMain.swift", tool="PowerShell")
    )
    contents = _contents(session, tmp_path, layout)
    assert any("rg.exe" in c and "`Get-ChildItem" in c for c in contents), contents


def test_a_sandbox_that_cannot_start_is_a_fact_even_for_a_probe(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    bwrap = (
        "Process exited with code 1\nOutput:\nbwrap: No permissions to create a new namespace, "
        "likely because the kernel does not allow non-privileged user namespaces."
    )
    session = (
        ClaudeSession()
        .user("where is the config")
        .bash('echo "$HOME" && ls -ld "$HOME/.tool"', bwrap, error=True)
    )
    contents = _contents(session, tmp_path, layout)
    assert any("bwrap: No permissions" in c and "sandbox (bwrap)" in c for c in contents)


def test_stdin_that_is_not_a_terminal_is_a_fact(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("resume that session")
        .bash("codex resume 019c", "Exit code 1\nError: stdin is not a terminal", error=True)
    )
    contents = _contents(session, tmp_path, layout)
    assert any("stdin is not a terminal" in c and "(a TTY)" in c for c in contents), contents


def test_an_edit_refused_file_after_file_is_cured_by_a_script_writing_the_latest(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    refused = "File has been unexpectedly modified. Read it again before attempting to write it."
    session = ClaudeSession().user("add the field")
    for path in ("C:/w/pages/form.js", "C:/w/models/Appraisal.js"):
        session.bash(path, refused, error=True, tool="Edit")
        session.bash(f"cat {path}", "export default {}")  # read again, refused again
        session.bash(path, refused, error=True, tool="Edit")
    script = (
        "node -e \"const fs = require('fs'); let c = fs.readFileSync('C:/w/models/Appraisal.js', "
        "'utf8'); c = c.replace('aiHint: String,', 'aiHint: String, notes: String,'); "
        "fs.writeFileSync('C:/w/models/Appraisal.js', c); console.log('Model updated')\""
    )
    session.bash(script, "Model updated")
    contents = _contents(session, tmp_path, layout)
    assert any("unexpectedly modified" in c and "readFileSync" in c for c in contents), contents


def test_a_sandbox_that_cannot_start_is_read_inside_codexs_report_too(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    denied = (
        "exec_command failed for `/bin/bash -lc pwd`: CreateProcess { message: "
        '"Codex(Sandbox(Denied { output: ExecToolCallOutput { exit_code: 1, stdout: StreamOutput '
        '{ text: \\"\\", truncated_after_lines: None }, stderr: StreamOutput { text: \\"bwrap: '
        'loopback: Failed RTM_NEWADDR: Operation not permitted\\\\n\\", truncated_after_lines: '
        'None }, duration: 0ns, timed_out: false }, network_policy_decision: None }))" }'
    )
    session = ClaudeSession().user("where am I").bash("pwd", denied, error=True)
    contents = _contents(session, tmp_path, layout)
    assert any("`pwd` failed (bwrap: loopback" in c for c in contents), contents
