"""What a failing call's error says about the machine is a lesson on its own (issue 24).

The examples are written for these tests, in the shapes of the real sessions: a missing program
followed by an unrelated next step or by its substitute, a pipeline whose missing last stage
its status hides, a command that wants a terminal, Claude Code's Grep unable to start ``rg``, a
dev server the sandbox will not let listen under a lead-in line.
"""

from __future__ import annotations

import json
from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._calls import error_excerpt
from swarmq.forge._envfacts import environment_fact, missing_program, same_family
from swarmq.forge.extract import forge_transcript
from swarmq.knowledge._factrule import fact_kind
from swarmq.knowledge.signature import failure_signature
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, codex_old_rollout


def sequences(found: list[object]) -> list[str]:
    return [c.content for c in found if getattr(c, "extractor", "") == "sequence"]  # type: ignore[attr-defined]


def test_a_missing_program_followed_by_an_unrelated_step_is_the_fact_alone(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("set up the server")
        .bash("npm init -y 2>&1", "Exit code 127\n(eval):1: command not found: npm", error=True)
        .bash("mkdir -p src", "")
        .bash("cat README.md", "# server")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        "`npm init -y 2>&1` failed ((eval):1: command not found: npm); "
        "`npm` is not installed here (not on PATH)."
    ]


def test_a_missing_program_is_cured_by_its_family_and_the_lesson_states_both(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "run the tests"),
            ("shell", (["bash", "-lc", "pnpm test"], "bash: pnpm: command not found", 127)),
            ("shell", (["bash", "-lc", "sed -n 1,40p package.json"], '{"name": "app"}', 0)),
            ("shell", (["bash", "-lc", "npm run test"], "Tests: 3 passed", 0)),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert found == [
        "`pnpm test` failed (bash: pnpm: command not found); `pnpm` is not installed here "
        "(not on PATH); `npm run test` worked instead."
    ]


def test_a_pipeline_whose_missing_last_stage_its_status_hides_still_failed(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("what did the worker say last?")
        .bash(
            "tail -100 logs/worker.jsonl | jq -r .message",
            "/bin/bash: line 1: jq: command not found",
        )
        .bash("tail -5 logs/worker.jsonl", '{"message": "done"}')
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1 and "`jq` is not installed here" in found[0]


def test_a_command_that_wants_a_terminal_is_fixed_without_it(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("upgrade the module")
        .bash(
            "docker exec -it web-1 odoo -u sales --stop-after-init",
            "Exit code 1\nthe input device is not a TTY.  If you are using mintty, try 'winpty'",
            error=True,
        )
        .bash("docker exec web-1 odoo -u sales --stop-after-init", "done")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        "`docker exec -it web-1 odoo -u sales --stop-after-init` failed (the input device is not "
        "a TTY.  If you are using mintty, try 'winpty'); `docker exec web-1 odoo -u sales "
        "--stop-after-init` worked instead."
    ]


def test_grep_unable_to_start_rg_is_a_fact_and_a_shell_search_its_way_round(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    spawn = "Error: spawn /usr/lib/node_modules/claude-code/vendor/ripgrep/x64-linux/rg EACCES"
    session = (
        ClaudeSession()
        .user("where is parse defined?")
        .bash("def parse", spawn, error=True, tool="Grep")
        .bash("grep -rn 'def parse' src", "src/a.py:3:def parse(x):")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1 and "rg EACCES" in found[0]
    assert "`grep -rn 'def parse' src` worked instead" in found[0]
    assert failure_signature(f"$ def parse\n{spawn}") == "rg: spawn eacces"
    assert failure_signature(found[0]) == "rg: spawn eacces"


def test_the_line_that_carries_the_error_beats_a_lead_in_and_colour_codes() -> None:
    output = (
        "\n> app@0.1.0 test:e2e\n\x1b[2m[WebServer] \x1b[22m\x1b[31merror when starting dev "
        "server:\n\x1b[2m[WebServer] \x1b[22mError: listen EPERM: operation not permitted "
        "0.0.0.0:5173\n    at Server.setupListenHandle"
    )
    assert error_excerpt(output) == (
        "[WebServer] Error: listen EPERM: operation not permitted 0.0.0.0:5173"
    )
    assert error_excerpt("fatal: could not run:\nfatal: unable to reach the remote") == (
        "fatal: unable to reach the remote"
    )


def test_environment_facts_and_families() -> None:
    assert missing_program("python", "bash: line 1: python: command not found") == "python"
    assert missing_program("rg", "execution error: No such file or directory (os error 2)") == "rg"
    assert (
        missing_program(
            "find", "No such file or directory (os error 2)", "find . | xargs grep -i x"
        )
        == ""
    )  # which stage of a pipeline run as argv is missing is not said
    assert environment_fact("sudo", "sudo: a terminal is required to read the password") == (
        "sudo cannot ask for a password here (the agent has no terminal)"
    )
    assert environment_fact("npm", "npm error code EAI_AGAIN") == (
        "`npm` cannot reach the network here"
    )
    assert environment_fact("make", "make: *** [all] Error 2") == ""
    assert same_family("python", "python3") and same_family("pnpm", "npm")
    assert same_family("rg", "ls") and not same_family("npm", "mkdir")


def test_every_stated_fact_is_a_project_fact_of_the_environment() -> None:
    """Stated so that the knowledge store's fact rule shows it at every session start."""
    from swarmq.knowledge._factrule import FactKind, fact_kind

    errors = [
        ("npm", "(eval):1: command not found: npm"),
        ("docker", "the input device is not a TTY"),
        ("sudo", "sudo: a terminal is required to read the password"),
        ("git", "ssh: Could not resolve hostname github.com"),
        ("cargo", "failed in sandbox: sandbox denied exec error"),
        ("Grep", "Error: spawn /opt/claude/vendor/ripgrep/rg EACCES"),
    ]
    for program, error in errors:
        fact = environment_fact(program, error)
        assert fact and fact_kind(f"{fact}.") is FactKind.ENVIRONMENT, fact


def test_zsh_reading_a_literal_route_path_as_a_pattern_is_a_lesson_with_its_quoted_fix(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = "src/app/(public)/services/[type]/page.tsx"
    session = (
        ClaudeSession()
        .user("tidy the services page")
        .bash(f"sed -n 1,80p {path}", f"Exit code 1\nzsh:1: no matches found: {path}", error=True)
        .bash(f"sed -n 1,80p '{path}'", "export default function Page() {}")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    # the error as printed: a path this short costs the lesson nothing said twice
    assert found[0].startswith(f"`sed -n 1,80p {path}` failed (zsh:1: no matches found: {path})")
    assert "quote paths with brackets or parentheses here (zsh reads them as patterns)" in found[0]
    assert found[0].endswith("` worked instead.")
    assert failure_signature(found[0]) == "zsh: no matches found"


def test_the_errors_copy_of_a_very_long_path_is_shortened(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = "frontend/src/app/(dashboard)/organizations/[organizationId]/settings/page.tsx"
    session = (
        ClaudeSession()
        .user("tidy the settings page")
        .bash(f"sed -n 1,80p {path}", f"Exit code 1\nzsh:1: no matches found: {path}", error=True)
        .bash(f"sed -n 1,80p '{path}'", "export default function Page() {}")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    # the call spells the path whole; its copy in the error would cost the lesson its words
    assert "(zsh:1: no matches found: …/settings/page.tsx)" in found[0], found


def test_a_wildcard_that_matched_nothing_is_an_answer_not_a_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("which node is installed?")
        .bash(
            "ls /opt/homebrew/bin/node* ~/.fnm/node-versions/*/bin/node",
            "Exit code 1\n(eval):1: no matches found: /opt/homebrew/bin/node*",
            error=True,
        )
        .bash(
            "cp /tmp/a[1].json out/",
            "Exit code 1\n(eval):1: no matches found: /tmp/a*.json",
            error=True,
        )
        .bash("which node", "/usr/local/bin/node")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == []


def test_a_file_looked_for_under_the_wrong_root_and_found_under_another_is_a_layout_fact(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    wrong = "X:\\acme\\Odoo_Docs\\document_library\\models\\graph_sync.py"
    right = "X:\\acme\\Custom_Addons\\document_library\\models\\graph_sync.py"
    session = (
        ClaudeSession()
        .user("fix the sync error at line 935")
        .bash(
            wrong,
            "File does not exist. Note: your current working directory is X:\\acme\\Odoo_Docs.",
            error=True,
            tool="Read",
        )
        .bash("**/graph_sync.py", "No files found", tool="Glob")
        .user("the module is in X:\\acme\\Custom_Addons\\document_library")
        .bash(right, "920  folder_item_id = None", tool="Read")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    assert (
        "`document_library\\models\\graph_sync.py` lives in `X:\\acme\\Custom_Addons`, "
        "not in `X:\\acme\\Odoo_Docs`" in found[0]
    )
    assert fact_kind(found[0]) is not None


def test_a_bare_file_name_found_in_a_folder_is_where_it_lives(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "read the architecture"),
            (
                "shell",
                (
                    ["bash", "-lc", "cat architecture.md"],
                    "cat: architecture.md: No such file or directory",
                    1,
                ),
            ),
            ("shell", (["bash", "-lc", "cat docs/architecture.md"], "# Architecture", 0)),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert found == [
        "`cat architecture.md` failed (cat: architecture.md: No such file or directory); "
        "`architecture.md` lives in `docs`, not in the working directory; "
        "`cat docs/architecture.md` worked instead."
    ]


def test_another_file_after_a_missing_one_is_the_next_look_not_a_layout_fact(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("where is the config?")
        .bash("src/config.ts", "File does not exist.", error=True, tool="Read")
        .bash("lib/config.ts", "export const config = {}", tool="Read")
        .bash(
            "cat src/settings/index.ts",
            "cat: src/settings/index.ts: No such file or directory",
            error=True,
        )
        .bash("cat src/app/main.ts", "main()")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == []


def test_layout_relocations_and_mistyped_roots() -> None:
    from swarmq.forge._layout import relocation

    moved = relocation(".bmad/bmm/core/tasks/workflow.xml", ".bmad/core/tasks/workflow.xml")
    assert moved is not None and moved.fact() == (
        "`core/tasks/workflow.xml` lives in `.bmad`, not in `.bmad/bmm`"
    )
    assert relocation(".specify.specify/templates/t.md", ".specify/templates/t.md") is None
    assert relocation("scr/app/main.py", "src/app/main.py") is None
    assert relocation("src/config.ts", "lib/config.ts") is None
    assert relocation("docs/a.md", "docs/a.md") is None
    # another folder whose name holds the wrong one, and a naming convention: not slips
    renamed = relocation(
        "wf/architecture/steps/step-01.md", "wf/create-architecture/steps/step-01.md"
    )
    assert renamed is not None and renamed.fact() == (
        "`steps/step-01.md` lives in `wf/create-architecture`, not in `wf/architecture`"
    )
    underscored = relocation("bmad/bmm/agents/pm.md", "_bmad/bmm/agents/pm.md")
    assert underscored is not None and underscored.right == "_bmad"
    # found a folder deeper than looked for: the same file; not a name every folder has
    deeper = relocation("wf/readiness/step-01.md", "wf/readiness/steps/step-01.md")
    assert deeper is not None and deeper.right == "wf/readiness/steps"
    assert relocation("a/b/README.md", "a/b/c/README.md") is None
    assert relocation("a/b/notes.md", "a/notes.md") is None
    # two long absolute roots are told apart where they part
    far = relocation(
        "/home/u/p/_b/w/3-s/architecture/steps/s1.md",
        "/home/u/p/_b/w/3-s/create-architecture/steps/s1.md",
    )
    assert far is not None
    assert (far.wrong, far.right) == ("3-s/architecture", "3-s/create-architecture")
    nested = relocation("/home/u/p/_b/w/readiness/s1.md", "/home/u/p/_b/w/readiness/steps/s1.md")
    assert nested is not None and (nested.wrong, nested.right) == ("readiness", "readiness/steps")
    # found in the user's home: the user's own file of that name, not the project's layout
    assert (
        relocation("/Users/s/code/app/.claude/settings.json", "/Users/s/.claude/settings.json")
        is None
    )
    assert (
        relocation(
            "C:\\Users\\s\\app\\.vscode\\settings.json", "C:\\Users\\s\\.vscode\\settings.json"
        )
        is None
    )


def test_a_missing_program_is_not_cured_by_an_unrelated_call_of_another_program(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "run the tests"),
            (
                "shell",
                (["bash", "-lc", "pytest"], "/bin/bash: line 1: pytest: command not found", 127),
            ),
            ("shell", (["bash", "-lc", "sed -n '1,200p' pyproject.toml"], "[project]", 0)),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert found == [
        "`pytest` failed (/bin/bash: line 1: pytest: command not found); "
        "`pytest` is not installed here (not on PATH)."
    ]


def test_a_missing_programs_stand_in_that_failed_too_completes_its_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """``pytest`` and ``python`` missing, then ``python3 -m pytest`` answering "No module named
    pytest": each missing program's lesson says what its stand-in answered, which is what the
    next session needs (``python3`` is there; the tests cannot run as they are)."""
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "run the tests"),
            (
                "shell",
                (["bash", "-lc", "pytest -q"], "/bin/bash: line 1: pytest: command not found", 127),
            ),
            (
                "shell",
                (
                    ["bash", "-lc", "python -m pytest -q"],
                    "/bin/bash: line 1: python: command not found",
                    127,
                ),
            ),
            (
                "shell",
                (
                    ["bash", "-lc", "python3 -m pytest -q"],
                    "/usr/bin/python3: No module named pytest",
                    1,
                ),
            ),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    stand_in = "`python3 -m pytest -q` failed too (/usr/bin/python3: No module named pytest)"
    assert f"`pytest` is not installed here (not on PATH); {stand_in}" in " ".join(found)
    assert f"`python` is not installed here (not on PATH); {stand_in}" in " ".join(found)
    assert not any("`python -m pytest -q` failed too" in lesson for lesson in found)


def test_a_pipeline_ending_in_a_search_that_matched_nothing_is_an_answer(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """A pipeline's status is its last stage's: ``strings bin | rg x`` exiting 1 with nothing on
    stderr (Codex wraps it as a sandbox denial) found nothing; ``git ls-remote | rg x`` exiting 1
    after "Could not resolve hostname" failed in its first stage, and that stays a lesson."""
    quiet = (
        "failed in sandbox LinuxSeccomp with execution error: Denied { output: "
        'ExecToolCallOutput { exit_code: 1, stdout: StreamOutput { text: "", '
        'truncated_after_lines: None }, stderr: StreamOutput { text: "", '
        "truncated_after_lines: None } } }"
    )
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "find where entries are saved"),
            ("shell", (["bash", "-lc", 'strings -n 8 mcpserver | rg "save_entry"'], quiet, 1)),
            (
                "shell",
                (
                    ["bash", "-lc", "git ls-remote --heads origin | rg -n 'refs/heads/1-x$'"],
                    "ssh: Could not resolve hostname github.com: -65563",
                    1,
                ),
            ),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert not any("save_entry" in lesson for lesson in found)
    assert any("`git` cannot reach the network here" in lesson for lesson in found)


def _absent_session(path: Path, then: list[tuple[str, tuple[list[str], str, int]]]) -> Path:
    """A workflow asks for a file; the read fails, a search by its name finds nothing."""
    return codex_old_rollout(
        path,
        [
            ("user", "finish the PRD workflow"),
            (
                "shell",
                (
                    ["bash", "-lc", "cat /home/u/tf/_bmad/core/tasks/bmad-help.md"],
                    "cat: /home/u/tf/_bmad/core/tasks/bmad-help.md: No such file or directory",
                    1,
                ),
            ),
            ("shell", (["bash", "-lc", "rg --files -g 'bmad-help.md' /home/u/tf/_bmad"], "", 1)),
            *then,
        ],
    )


def test_a_file_looked_for_then_searched_for_in_vain_does_not_exist_here(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = _absent_session(
        tmp_path / "r.jsonl",
        [("shell", (["bash", "-lc", "cat _bmad-output/prd.md"], "# PRD", 0))],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert found == [
        "`cat /home/u/tf/_bmad/core/tasks/bmad-help.md` failed (cat: "
        "/home/u/tf/_bmad/core/tasks/bmad-help.md: No such file or directory); `bmad-help.md` "
        "does not exist in this project: "
        "`rg --files -g 'bmad-help.md' /home/u/tf/_bmad` found nothing."
    ]
    assert fact_kind(found[0]) is not None
    assert failure_signature(found[0]) == "cat: no such file or directory: tasks/bmad-help.md"


def test_a_file_searched_for_in_vain_and_then_written_is_no_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    created = ["bash", "-lc", "tee /home/u/tf/_bmad/core/tasks/bmad-help.md"]
    path = _absent_session(
        tmp_path / "r.jsonl",
        [
            ("shell", (["bash", "-lc", "cat _bmad/core/tasks/bmad-help.md"], "# Help", 0)),
            ("shell", (created, "", 0)),
        ],
    )
    assert sequences(forge_transcript(path, layout, locks).found) == []


def test_a_usage_error_is_fixed_by_a_call_that_gets_past_it_and_fails_for_another_reason(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the hardware tests with four jobs")
        .bash(
            "nix run ./tests#run . --jobs 4",
            "error: unrecognised flag '--jobs'\nTry 'nix --help' for more information.",
            error=True,
        )
        .bash(
            "nix run ./tests#run . -- --jobs 4",
            "building tests...\nerror: 2 of 40 hardware profiles failed to evaluate",
            error=True,
        )
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        "`nix run ./tests#run . --jobs 4` failed (error: unrecognised flag '--jobs'); "
        "`nix run ./tests#run . -- --jobs 4` worked instead."
    ]
    # the same usage error again is no way past it
    again = (
        ClaudeSession()
        .user("run the tests")
        .bash("nix run . --jobs 4", "error: unrecognised flag '--jobs'", error=True)
        .bash("nix run . --jobs=4", "error: unrecognised flag '--jobs'", error=True)
    )
    assert sequences(forge_transcript(again.write(tmp_path / "t.jsonl"), layout, locks).found) == []


PWSH_SED = (
    "170:  const handleProceedToExcel = () => {\r\n"
    "\x1b[31;1msed: \x1b[31;1mThe term 'sed' is not recognized as a name of a cmdlet, function, "
    "script file, or executable program.\x1b[0m\r\n"
)


def test_a_program_missing_in_powershell_is_an_environment_fact_with_its_stand_in(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    failed = "pwsh -NoProfile -Command rg -n handleProceedToExcel src/Page.tsx; sed -n '1,120p' src/Page.tsx"
    worked = (
        "pwsh -NoProfile -Command $p='src/Page.tsx'; (Get-Content -LiteralPath $p | "
        'Select-Object -First 120) -join "`n"'
    )
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "wire the export button"),
            (
                "shell",
                (["pwsh", "-NoProfile", "-Command", failed.split("-Command ", 1)[1]], PWSH_SED, 1),
            ),
            (
                "shell",
                (
                    ["pwsh", "-NoProfile", "-Command", worked.split("-Command ", 1)[1]],
                    "import x",
                    0,
                ),
            ),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert len(found) == 1
    assert "The term 'sed' is not recognized" in found[0]
    assert "`sed` is not installed here (not on PATH)" in found[0]
    assert failure_signature(found[0]) == "sed: command not found"
    assert fact_kind(found[0]) is not None  # shown at every session start of the project


def test_the_agents_tool_rules_are_stated_whatever_fixed_them() -> None:
    from swarmq.forge._envfacts import tool_rule

    add = "*** Begin Patch\n*** Add File: docs/a.md\n# Title\n*** End Patch"
    assert "needs a `+` prefix" in tool_rule(
        "apply_patch", "invalid hunk at line 3, '# Title' is not a valid hunk header", add
    )
    assert "timeout_ms" in tool_rule("pwsh", "command timed out after 10031 milliseconds", "ls")
    assert tool_rule("pytest", "command timed out after 600000 milliseconds", "pytest") == ""
    assert "PowerShell has no heredoc" in tool_rule(
        "pwsh",
        "Missing file specification after redirection operator.",
        "pwsh.exe -Command applypatch << 'PATCH'",
    )
    assert tool_rule("git", "fatal: not a git repository", "git status") == ""


def test_a_call_the_sandbox_refused_and_its_escalated_rerun_say_so(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    denied = (
        'exec_command failed: SandboxDenied { message: "Exception in thread \\"main\\" '
        "java.io.FileNotFoundException: /Users/n/.gradle/wrapper/dists/gradle-8.11.1-bin.zip.lck "
        '(Operation not permitted)" }'
    )
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "compile the app"),
            ("shell", (["./gradlew", ":app:compileDebugKotlin"], denied, 0)),
            ("shell", (["./gradlew", ":app:compileDebugKotlin", "(escalated)"], "BUILD OK", 0)),
        ],
    )
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:  # Codex's unified exec reports the refusal bare, with no exit code
        if record.get("type") == "function_call_output" and record["call_id"] == "call1":
            record["output"] = denied
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    found = sequences(forge_transcript(path, layout, locks).found)
    assert len(found) == 1
    assert "the sandbox refuses `gradlew` here; it runs with escalated permissions" in found[0]
    # the next session needs the parameter that asks for them, by either Codex's name
    assert '`sandbox_permissions: "require_escalated"`' in found[0]
    assert "`with_escalated_permissions: true`" in found[0]
    assert fact_kind(found[0]) is not None


def test_a_file_too_large_to_read_is_a_lesson_about_that_file(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    big = "/Users/j/site/static/scss/pages/pdp.scss"
    session = (
        ClaudeSession()
        .user("tidy the pdp styles")
        .bash(
            big,
            "File content (13430 tokens) exceeds maximum allowed tokens (10000). Use offset and "
            "limit parameters to read specific portions of the file.",
            error=True,
            tool="Read",
        )
        .bash(big, ".pdp { display: grid }", tool="Read")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1
    assert (
        "`pdp.scss` is too large to read at once: read it in parts with offset and limit"
        in (found[0])
    )
    assert failure_signature(found[0]) == "Read: file too large"


def test_a_tool_rule_nothing_fixed_is_still_a_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "update the spec"),
            (
                "shell",
                (
                    ["pwsh.exe", "-NoLogo", "-Command", "ApplyPatch << 'PATCH'\n*** Begin Patch"],
                    "ParserError:\nMissing file specification after redirection operator.",
                    1,
                ),
            ),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert len(found) == 1 and "PowerShell has no heredoc" in found[0]


def test_a_program_uv_could_not_spawn_is_missing_not_uv(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    lint = "uv run flake8 src/ tests/ --count"
    session = (
        ClaudeSession()
        .user("lint it")
        .bash(lint, "<tool_use_error>Sibling tool call errored</tool_use_error>", error=True)
        .bash(
            lint,
            "Exit code 2\nerror: Failed to spawn: `flake8`\n  Caused by: No such file or "
            "directory (os error 2)",
            error=True,
        )
        .bash(f"uv pip install flake8 && {lint}", "0")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1  # a call cancelled beside a failing one did not fail
    assert "Failed to spawn: 'flake8' (Caused by: No such file or directory" in found[0]
    assert "`flake8` is not installed here" in found[0] and "`uv` is not" not in found[0]


def test_a_refusal_is_fixed_by_the_call_that_gets_past_it(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the tests")
        .bash(
            "go test ./...",
            "pattern ./...: open /home/u/.cache/go-build/be/x-d: permission denied\n"
            "FAIL\t./... [setup failed]",
            error=True,
        )
        .bash(
            "GOCACHE=/tmp/go-build go test ./...",
            "internal/domain/schedule.go:169:26: undefined: itemPlan",
            error=True,
        )
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 1 and found[0].endswith(
        "`GOCACHE=/tmp/go-build go test ./...` worked instead."
    )


def test_reading_the_failing_script_is_no_fix(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    script = ".specify/scripts/bash/create-new-feature.sh"
    session = (
        ClaudeSession()
        .user("create the feature")
        .bash(
            f'{script} --json --short-name "x"', "Error: --short-name requires a value", error=True
        )
        .bash(f"sed -n '1,200p' {script}", "#!/usr/bin/env bash")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert not any("worked instead" in lesson for lesson in found)


def test_a_missing_subcommand_is_fixed_by_the_call_that_replaces_its_word(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("run the patrol")
        .bash(
            "gt deacon pending",
            'Exit code 1\nError: unknown command "pending" for "gt deacon"\n'
            "Run 'gt deacon --help' for available commands",
            error=True,
        )
        .bash("gt deacon trigger-pending", "○ No pending spawns")
        .bash("bd tree cr-wisp-e3y", 'Error: unknown command "tree" for "bd"', error=True)
        .bash("bd list --parent=cr-wisp-e3y", "cr-wisp-e3y.1  open")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        '`gt deacon pending` failed (Error: unknown command "pending" for "gt deacon"); '
        "`gt deacon trigger-pending` worked instead.",
        '`bd tree cr-wisp-e3y` failed (Error: unknown command "tree" for "bd"); '
        "`bd list --parent=cr-wisp-e3y` worked instead.",
    ]


def test_a_missing_subcommand_nothing_replaced_is_a_fact_of_the_installed_program(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("check the context, then close the step")
        .bash(
            "gt context --usage",
            'Exit code 1\nError: unknown command "context" for "gt"\nRun \'gt --help\' for usage.',
            error=True,
        )
        .say(
            "```\n═══════════════════════════════\n  🔄 LOOP-OR-EXIT\n  Context is low (~16%), "
            "preparing to loop\n═══════════════════════════════\n```"
        )
        .bash("bd close hq-wisp-6n7", "✓ Closed hq-wisp-6n7")
        .bash("gt mail inbox", "📬 Inbox: 0 messages")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    # the banner the agent printed next is no reason; the next ``gt`` call, on other words, is
    # no cure
    assert found == [
        '`gt context --usage` failed (Error: unknown command "context" for "gt"); '
        "the `gt` installed here has no `context` command."
    ]


def test_missing_subcommands_as_frameworks_say_them() -> None:
    assert "has no `pending` command" in environment_fact(
        "gt", 'Error: unknown command "pending" for "gt deacon"'
    )
    assert "`git` installed here has no `stauts`" in environment_fact(
        "git", "git: 'stauts' is not a git command. See 'git --help'."
    )
    assert "has no `serve`" in environment_fact("mytool", "Error: No such command 'serve'.")
    assert "has no `lint`" in environment_fact(
        "manage.py", "manage.py: error: argument cmd: invalid choice: 'lint' (choose from 'run')"
    )
    assert "has no `fmt`" in environment_fact("tool", "error: unrecognized subcommand 'fmt'")
    assert environment_fact("gt", "Error: unknown flag: --tree") == ""


def test_a_cure_run_beside_the_failed_call_which_then_works_is_the_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    dubious = (
        "Exit code 128\nfatal: detected dubious ownership in repository at '/home/u/gt'\n"
        "To add an exception for this directory, call:\n\n"
        "\tgit config --global --add safe.directory /home/u/gt"
    )
    session = (
        ClaudeSession()
        .user("why does the doctor fail?")
        .bash("pwd && git status", dubious, error=True)
        .bash("git config --global --add safe.directory /home/u/gt", "")
        .bash("cd /home/u/gt && git status", "On branch master\nNo commits yet")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        "`pwd && git status` failed (fatal: detected dubious ownership in repository at "
        "'/home/u/gt'); after `git config --global --add safe.directory /home/u/gt` the same "
        "call worked."
    ]
    # a look between the failure and its identical retry cured nothing: no lesson names it
    looked = (
        ClaudeSession()
        .user("plan the feature")
        .bash(
            ".specify/scripts/bash/setup-plan.sh --json",
            "ERROR: Not on a feature branch. Current branch: main",
            error=True,
        )
        .bash("git branch --show-current", "main")
        .bash(".specify/scripts/bash/setup-plan.sh --json", '{"FEATURE_SPEC": "specs/001/spec.md"}')
    )
    assert not any(
        "git branch" in lesson
        for lesson in sequences(
            forge_transcript(looked.write(tmp_path / "t.jsonl"), layout, locks).found
        )
    )


def test_an_output_whose_only_error_lines_are_warnings_says_no_cause(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    assert error_excerpt("Warn: font missing\nError: module x not found") == (
        "Error: module x not found"
    )
    session = (
        ClaudeSession()
        .user("update the module")
        .bash(
            "docker exec web odoo -u crm --stop-after-init",
            "Exit code 255\nINFO odoo: version 18\nWarn: Can't find .pfb for face 'Courier'",
            error=True,
        )
        .bash("docker-compose restart web", "Restarting web ... done")
        .bash("docker exec web odoo -u crm --stop-after-init", "INFO odoo: modules loaded")
    )
    assert (
        sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found) == []
    )


def test_a_package_manager_error_code_is_an_error_and_a_long_chain_names_its_last_programs(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    long_fix = (
        "mkdir -p /home/ken/portal/docs/abuse && cp /home/ken/docs/abuse/story-us-001-hard-caps.txt "
        "/home/ken/portal/docs/abuse/story-us-001-hard-caps.txt && git add "
        'docs/abuse/story-us-001-hard-caps.txt && git commit -m "docs: add story memory"'
    )
    session = (
        ClaudeSession()
        .user("typecheck, then commit the story memory")
        .bash(
            "pnpm run typecheck 2>&1",
            "Exit code 1\n\u2009ERR_PNPM_NO_IMPORTER_MANIFEST_FOUND\u2009 No package.json (or "
            'package.yaml, or package.json5) was found in "/home/ken".',
            error=True,
        )
        .bash("cd /home/ken/portal && pnpm run typecheck 2>&1", "> tsc --noEmit")
        .bash(
            'cd /home/ken && git add docs/abuse/story-us-001-hard-caps.txt && git commit -m "docs"',
            "Exit code 128\nfatal: not a git repository (or any of the parent directories): .git",
            error=True,
        )
        .bash(long_fix, "[main e685724] docs: add story memory")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert len(found) == 2
    assert found[0].startswith("`pnpm run typecheck 2>&1` failed (ERR_PNPM_NO_IMPORTER_MANIFEST")
    assert found[0].endswith("`cd /home/ken/portal && pnpm run typecheck 2>&1` worked instead.")
    assert "fatal: not a git repository" in found[1] and "`mkdir -p /home/ken/portal" in found[1]


def test_no_cure_is_named_for_a_bare_program_or_by_reading_another_file(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    flaky = (
        'execution error: Io(Custom { kind: Other, error: "CreateProcessWithLogonW failed: 1056" })'
    )
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "review the controllers"),
            ("shell", (["pwsh", "-Command", "Get-Content src\\A.cs"], flaky, 1)),
            ("shell", (["pwsh", "-Command", "Get-Content src\\B.cs"], "class B {}", 0)),
            ("shell", (["pwsh", "-Command", "Get-Content src\\A.cs"], "class A {}", 0)),
            ("shell", (["bash"], "docs/x.md: line 1: #: command not found", 127)),
            ("shell", (["python3", "-c", "print(1)"], "1", 0)),
            ("shell", (["bash"], "", 0)),
        ],
    )
    assert not any(
        "the same call worked" in lesson
        for lesson in sequences(forge_transcript(path, layout, locks).found)
    )


def test_a_program_missing_when_asked_its_version_is_a_fact_cured_by_its_family(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "which python is here?"),
            (
                "shell",
                (
                    ["bash", "-lc", "python --version"],
                    "/bin/bash: line 1: python: command not found",
                    127,
                ),
            ),
            ("shell", (["bash", "-lc", "python3 --version"], "Python 3.12.3", 0)),
            # a script's stray line "command not found" names no program: no fact
            ("shell", (["bash"], "docs/x.md: line 1: \ufeff#: command not found", 127)),
        ],
    )
    assert sequences(forge_transcript(path, layout, locks).found) == [
        "`python --version` failed (/bin/bash: line 1: python: command not found); `python` is "
        "not installed here (not on PATH); `python3 --version` worked instead."
    ]


def test_a_script_with_windows_line_endings_is_a_fact() -> None:
    crlf = "the script has Windows (CRLF) line endings, which bash cannot run: convert it to LF"
    assert environment_fact("bash", "x.sh: line 2: $'\\r': command not found") == crlf
    assert environment_fact("x.sh", "/usr/bin/env: ‘bash\\r’: No such file or directory") == crlf
    assert environment_fact("bash", "bash: line 1: rake: command not found") != crlf


def test_another_tool_of_the_same_mcp_server_cures_its_tool_s_failure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    server = "mcp__plugin_playwright_playwright__"
    session = (
        ClaudeSession()
        .user("check the page in a browser")
        .bash(
            "http://localhost:5173",
            "### Error\nError: browserType.launchPersistentContext: Chromium distribution 'chrome' "
            'is not found at /opt/google/chrome/chrome\nRun "npx playwright install chrome"',
            error=True,
            tool=server + "browser_navigate",
        )
        .bash("", "Browser installed", tool=server + "browser_install")
        .bash("http://localhost:5173", "### Page state", tool=server + "browser_navigate")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        "`browser_navigate http://localhost:5173` failed (Error: "
        "browserType.launchPersistentContext: Chromium distribution 'chrome' is not found at "
        "/opt/google/chrome/chrome); `browser_install` worked instead."
    ]
    # a tool of the server that only looks is no cure
    looked = (
        ClaudeSession()
        .user("check the page")
        .bash(
            "http://x",
            "### Error\nError: page crashed",
            error=True,
            tool=server + "browser_navigate",
        )
        .bash("", "- page snapshot", tool=server + "browser_snapshot")
    )
    assert (
        sequences(forge_transcript(looked.write(tmp_path / "t.jsonl"), layout, locks).found) == []
    )


def test_a_malformed_call_nothing_fixed_keeps_the_usage_line_its_program_printed(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("check the deacon")
        .bash(
            "gt session status deacon",
            "Exit code 1\nError: invalid address format: expected 'rig/polecat', got 'deacon'\n"
            "Usage:\n  gt session status <rig>/<polecat> [flags]\n\nFlags:\n  -h, --help",
            error=True,
        )
        .bash("cat state.json", "{}")
        # cobra prints its usage on every error: one without an operand's place says nothing
        .bash(
            "gt daemon start",
            "Error: daemon failed to start (check logs with 'gt daemon logs')\n"
            "Usage:\n  gt daemon start [flags]",
            error=True,
        )
        .bash("cat daemon.log", "started")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert found == [
        "`gt session status deacon` failed (Error: invalid address format: expected "
        "'rig/polecat', got 'deacon'); its usage: `gt session status <rig>/<polecat> [flags]`."
    ]


PWSH_GERMAN = (
    'pwsh : Die Benennung "pwsh" wurde nicht als Name eines Cmdlet, einer Funktion, einer '
    "Skriptdatei oder eines \\r\\nausführbaren Programms erkannt. Überprüfen Sie die Schreibweise "
    "des Namens, oder ob der Pfad korrekt ist (sofern \\r\\nenthalten), und wiederholen Sie den "
    "Vorgang.\\r\\nIn Zeile:1 Zeichen:1\\r\\n+ pwsh -NoLogo -Command 'Get-ChildItem -Force'\\r\\n"
    "+ ~~~~\\r\\n    + CategoryInfo          : ObjectNotFound: (pwsh:String) [], "
    "CommandNotFoundException\\r\\n    + FullyQualifiedErrorId : CommandNotFoundException\\r\\n"
)
"""Windows PowerShell 5.1 in German, as a Codex rollout keeps it (line ends escaped): the message
wrapped at the console's width above its position, the record in English."""


def test_a_program_missing_in_a_localised_powershell_is_told_by_its_error_record(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    excerpt = error_excerpt(PWSH_GERMAN)
    assert excerpt.startswith('pwsh : Die Benennung "pwsh" wurde nicht als Name eines Cmdlet')
    assert "ausführbaren Programms erkannt" in excerpt  # the wrapped lines joined
    assert excerpt.endswith("(CommandNotFoundException)")
    assert missing_program("Get-ChildItem", excerpt) == "pwsh"
    assert missing_program("Get-ChildItem", PWSH_GERMAN) == "pwsh"
    assert (
        environment_fact("Get-ChildItem", excerpt) == "`pwsh` is not installed here (not on PATH)"
    )
    # an option PowerShell was handed as a command is no program
    option = PWSH_GERMAN.replace('"pwsh"', '"-NoProfile"').replace("pwsh :", "-NoProfile :")
    option = option.replace("(pwsh:String)", "(-NoProfile:String)")
    assert missing_program("Get-ChildItem", error_excerpt(option)) == ""
    # nothing fixed it (the agent went on with powershell.exe): the fact is kept on its own
    path = codex_old_rollout(
        tmp_path / "r.jsonl",
        [
            ("user", "list the project"),
            (
                "shell",
                (
                    ["pwsh", "-NoLogo", "-Command", "Get-ChildItem -Force"],
                    PWSH_GERMAN.replace("\\r\\n", "\r\n"),
                    1,
                ),
            ),
            ("shell", (["git", "log", "--oneline", "-3"], "abc first", 0)),
        ],
    )
    found = sequences(forge_transcript(path, layout, locks).found)
    assert len(found) == 1
    assert "`pwsh` is not installed here (not on PATH)" in found[0]


def test_npm_s_own_warning_is_a_warning_not_the_failure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    """``npx`` of a package not yet cached prints npm's warning first; its "not found" is not
    why the call failed, so a lesson naming it would mislead."""
    assert error_excerpt(
        "npm warn exec The following package was not found and will be installed: x@1\n"
        "Error: module y not found"
    ) == ("Error: module y not found")
    npx = 'npx create-next-app@latest . --typescript --import-alias "@/*"'
    session = (
        ClaudeSession()
        .user("set up next.js here")
        .bash(
            npx,
            "Exit code 1\nnpm warn exec The following package was not found and will be "
            "installed: create-next-app@16.1.1\n\nThe directory portfolio contains files that "
            "could conflict:\n\n  README.md\n\nEither try using a new directory name, or remove "
            "the files listed above.",
            error=True,
        )
        .bash("rm README.md", "")
        .bash(npx, "Success! Created portfolio")
    )
    found = sequences(forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found)
    assert not any("npm warn" in lesson for lesson in found), found


def test_a_line_end_a_message_quotes_is_its_own_words_not_a_line_end() -> None:
    """rg refusing a regex names the escape it refuses (``"\\n"``); a line cut there left the
    lesson "failed (rg: the literal ")". An escaped line end that is not quoted is still one."""
    rg = (
        'rg: the literal "\\n" is not allowed in a regex\n\n'
        "Consider enabling multiline mode with the --multiline flag (or -U for short)."
    )
    assert error_excerpt(rg) == 'rg: the literal "\\n" is not allowed in a regex'
    escaped = "Invalid config at /home/u/app.json:\\n- agents.mode: Invalid input"
    assert error_excerpt(escaped) == "- agents.mode: Invalid input"
