"""Issue 24, forge precision and tool-error recall on heldout20's leftovers: a failed call run
again asking it to say more (``--verbose``) is a look, not a cure; a call the harness killed is
told with what the session's next check of the same state said."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._louder import asks_more
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession, codex_old_rollout, sequences


def test_only_verbosity_switches_added_is_asking_for_more() -> None:
    assert asks_more("tiler login --verbose", "tiler login")
    assert asks_more("DEBUG=* tiler login", "tiler login")
    assert asks_more("tiler -vv login", "tiler login")
    assert not asks_more("tiler login", "tiler login")
    assert not asks_more("tiler login --token abc", "tiler login")
    assert not asks_more("docker run -d web", "docker run web")  # -d detaches
    assert not asks_more("tiler logout --verbose", "tiler login")


def test_a_failed_call_rerun_verbose_is_no_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("log the tiler client in")
        .bash("tiler login", "Error: session could not be opened (E_NOSESSION)", error=True)
        .bash("tiler login --verbose", "What would you like to log in to? Please say more.")
        .say("The login command does not seem to exist.")
    )
    found = sequences(session.write(tmp_path / "verbose.jsonl"), layout, locks)
    assert not any("worked instead" in f for f in found), found


def test_a_rerun_with_a_real_change_still_cures(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("log the tiler client in")
        .bash("tiler login", "Error: session could not be opened (E_NOSESSION)", error=True)
        .bash("tiler login --device", "Logged in as ana.")
    )
    found = sequences(session.write(tmp_path / "device.jsonl"), layout, locks)
    assert any("`tiler login --device` worked" in f for f in found), found


def test_a_killed_call_is_told_with_the_check_that_followed_its_command(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("connect the repo host")
        .bash(
            "hostcli auth status", "Not signed in to any host. Run: hostcli auth login", error=True
        )
        .bash(
            "timeout 10s hostcli auth login --device", "Enter code 12AB-34CD at the URL", error=True
        )
        .user("done, I entered the code")
        .bash(
            "hostcli auth status", "Not signed in to any host. Run: hostcli auth login", error=True
        )
        .bash(
            "hostcli auth login --device",
            "Command timed out after 2m 0.0s\nEnter code 56EF-78AB at the URL",
            error=True,
        )
        .say("Please enter the new code in the browser.")
    )
    found = sequences(session.write(tmp_path / "login.jsonl"), layout, locks)
    killed = [f for f in found if "`hostcli auth login --device` failed" in f]
    assert len(killed) == 1, found
    assert "`hostcli auth status` still failed (Not signed in to any host" in killed[0]


def test_a_killed_call_without_a_check_of_its_command_is_told_alone(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("sync the mirror")
        .bash("hostcli mirror status", "mirror: stale (3 days)", error=True)
        .bash("hostcli repo sync --all", "Command timed out after 2m 0.0s", error=True)
        .say("The sync takes too long here.")
    )
    found = sequences(session.write(tmp_path / "sync.jsonl"), layout, locks)
    assert not any("still failed" in f for f in found), found


def test_a_heredoc_refused_by_the_sandbox_then_written_escalated_is_the_sandboxs_lesson(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    body = "# Plan\nStep one.\nEOF"
    path = codex_old_rollout(
        tmp_path / "heredoc.jsonl",
        [
            ("user", "save the plan in my notes folder"),
            (
                "shell",
                (
                    ["bash", "-lc", f"cat <<'EOF' > ~/.notes/plan.md\n{body}"],
                    "bash: line 1: permission denied: /home/ana/.notes/plan.md\n",
                    1,
                ),
            ),
            (
                "shell",
                (["bash", "-lc", f"cat <<'EOF' > /home/ana/.notes/plan.md\n{body}"], "", 0, True),
            ),
        ],
    )
    found = sequences(path, layout, locks)
    assert len(found) == 1, found
    assert "permission denied" in found[0]
    assert "require_escalated" in found[0], found[0]


def test_reading_a_file_that_is_not_there_stays_a_probe(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("show the plan")
        .bash("cat notes/plan.md", "cat: notes/plan.md: No such file or directory", error=True)
        .bash("ls notes", "todo.md")
    )
    assert sequences(session.write(tmp_path / "probe.jsonl"), layout, locks) == []


def _staged_after_writing(name: str, content: str) -> ClaudeSession:
    return (
        ClaudeSession()
        .user("put the project folder under git")
        .bash(
            "git add .",
            'error: open("venv/lib/python3.12/site-packages/_ext.so"): Permission denied\n'
            "fatal: adding files failed",
            error=True,
        )
        .bash("ls -la", "total 8\ndrwxr-xr-x venv\n-rw-r--r-- app.py")
        .call(
            "Write",
            {"file_path": f"/srv/app/{name}", "content": content},
            f"File created successfully at: /srv/app/{name}",
        )
        .bash("git add .", "")
    )


def test_a_settings_file_written_before_the_same_call_works_is_its_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = _staged_after_writing(".gitignore", "venv/\n")
    found = sequences(session.write(tmp_path / "ignore.jsonl"), layout, locks)
    assert len(found) == 1, found
    assert "fatal: adding files failed" in found[0] or "Permission denied" in found[0]
    assert "wrote `/srv/app/.gitignore`, the same call worked" in found[0], found[0]


def test_code_written_before_the_same_call_works_is_not_named_as_a_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = _staged_after_writing("app.py", "print('hi')\n")
    found = sequences(session.write(tmp_path / "code.jsonl"), layout, locks)
    assert not any("app.py`, the same call worked" in f for f in found), found


def _missing_then_listed(listing: str, runs: str) -> ClaudeSession:
    return (
        ClaudeSession()
        .user("check the tiler version")
        .bash("tiler-cli --version", "/bin/bash: line 1: tiler-cli: command not found", error=True)
        .bash("ls /home/ana/.local/share/tools/bin/", listing)
        .bash(f"{runs} --version", "4.2.0 (Tiler)")
    )


def test_a_stand_in_found_by_a_listing_names_where_it_lives(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = _missing_then_listed("tiler\ntiler-server", "tiler")
    found = sequences(session.write(tmp_path / "listed.jsonl"), layout, locks)
    assert len(found) == 1, found
    assert "`tiler` is `/home/ana/.local/share/tools/bin/tiler`" in found[0], found[0]


def test_a_listed_program_that_is_no_kin_of_the_missing_one_stands_in_for_nothing(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = _missing_then_listed("mapper\nviewer", "mapper")
    found = sequences(session.write(tmp_path / "unrelated.jsonl"), layout, locks)
    assert not any("mapper" in f for f in found), found


def _busy_then(next_call: str) -> ClaudeSession:
    return (
        ClaudeSession()
        .user("scaffold the site again")
        .bash(
            "rm -rf site && npx make-site site --template docs",
            "rm: cannot remove 'site': Device or resource busy",
            error=True,
        )
        .bash(next_call, "Scaffolded.")
    )


def test_a_busy_target_gone_round_by_a_new_name_names_both(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = _busy_then("npx make-site site-new --template docs")
    found = sequences(session.write(tmp_path / "busy.jsonl"), layout, locks)
    assert len(found) == 1, found
    assert "Device or resource busy" in found[0]
    assert "`site` stayed busy, and the work went on as `site-new`" in found[0], found[0]


def test_a_busy_target_and_unrelated_work_are_not_a_cure(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = _busy_then("npx make-site other --template docs")
    found = sequences(session.write(tmp_path / "other.jsonl"), layout, locks)
    assert not any("stayed busy" in f for f in found), found
