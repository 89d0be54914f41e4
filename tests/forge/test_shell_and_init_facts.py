"""A machine without systemd, cmd's switches typed into Git Bash, bash's `&&`/`||` typed into
Windows PowerShell 5.1 and zsh stopping a command on an unmatched pattern are environment facts.

Small sessions written for these tests, in Claude Code's record shapes; the errors are the ones
systemctl, GNU coreutils and PowerShell 5.1 print (a container or a cloud shell without systemd;
Git Bash on Windows; Windows PowerShell), the commands and names invented.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._envfacts import init_fact, unmatched_glob_stops, windows_fact
from swarmq.forge._gitbash import cmd_idioms
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _found

_NO_INIT = (
    "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
    "Failed to connect to bus: Host is down"
)


def test_a_service_systemd_cannot_start_is_a_fact_with_its_unit(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("run the metrics exporter as a service")
        .bash("sudo systemctl enable --now exporter", _NO_INIT, error=True)
        .say("The unit is written; it cannot be started here.")
    )
    found = _found(session, tmp_path, layout)
    assert len(found) == 1
    assert "has not been booted with systemd as init system" in found[0]
    assert "there is no systemd here" in found[0] and "`exporter.service`" in found[0]


def test_no_bus_alone_says_no_systemd_only_beside_systemd_tools() -> None:
    assert init_fact("Failed to connect to bus: Host is down", "journalctl -u web") != ""
    assert init_fact("Failed to connect to bus: Host is down", "notify-send done") == ""
    assert init_fact("Job for web.service failed because the control process exited", "x") == ""


def test_cmd_switches_read_as_paths_in_git_bash(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("start the sample app over")
        .bash(
            "rmdir /s /q sample && mkdir sample",
            "rmdir: failed to remove '/s': No such file or directory\n"
            "rmdir: failed to remove '/q': No such file or directory\n"
            "rmdir: failed to remove 'sample': Directory not empty",
            error=True,
        )
        .bash("rm -rf sample && mkdir sample", "")
    )
    found = _found(session, tmp_path, layout)
    assert len(found) == 1
    assert "rmdir: failed to remove '/s'" in found[0]
    assert "Git Bash" in found[0] and "`rm -rf DIR`" in found[0]


def test_a_switch_is_an_idiom_only_when_a_program_named_it_a_path() -> None:
    listing = cmd_idioms("dir /b src", "dir: cannot access '/b': No such file or directory")
    assert "`ls -1`" in listing
    removed = cmd_idioms("del /f /q out.log", "/usr/bin/bash: line 1: del: command not found")
    assert "`rm -f FILE`" in removed
    assert cmd_idioms("rmdir old", "rmdir: failed to remove 'old': Directory not empty") == ""
    assert cmd_idioms("ls /s", "ls: cannot access '/s': No such file or directory") == ""


_PS5 = (
    "At line:1 char:14\r\n+ npm ci && npm test\r\n+              ~~\r\n"
    "The token '&&' is not a valid statement separator in this version.\r\n"
    "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\r\n"
    "    + FullyQualifiedErrorId : InvalidEndOfLine"
)


def test_a_bash_chain_in_powershell_5_is_a_fact(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("install and run the tests")
        .bash("npm ci && npm test", _PS5, error=True, tool="PowerShell")
        .bash("npm ci; if ($?) { npm test }", "added 12 packages\n3 passing", tool="PowerShell")
    )
    found = _found(session, tmp_path, layout)
    assert len(found) == 1
    assert "is not a valid statement separator" in found[0]
    assert "Windows PowerShell 5.1" in found[0] and "`$?`" in found[0]


def test_the_error_id_says_it_in_any_language_but_only_for_a_chain() -> None:
    german = 'Das Token "&&" ist in dieser Version kein gültiges Anweisungstrennzeichen.\n'
    german += "    + FullyQualifiedErrorId : InvalidEndOfLine"
    assert "PowerShell 5.1" in windows_fact("git add . && git commit", german)
    assert "PowerShell 5.1" not in windows_fact("git commit -m x", german)


def test_zsh_stopping_a_chain_on_an_unmatched_pattern_is_a_fact(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("clear the old checkpoints and train again")
        .bash(
            "rm -f runs/ckpt_*.pt && python fit.py --epochs 3",
            "Exit code 1\n(eval):1: no matches found: runs/ckpt_*.pt",
            error=True,
        )
        .bash("python fit.py --epochs 3", "epoch 3/3 loss 0.41")
    )
    found = _found(session, tmp_path, layout)
    assert len(found) == 1
    assert "no matches found" in found[0] and "the shell is zsh" in found[0]


def test_an_unmatched_search_is_still_an_answer() -> None:
    error = "zsh:1: no matches found: src/*.orig"
    assert unmatched_glob_stops(error, "ls src/*.orig") == ""
    assert unmatched_glob_stops(error, "ls src/*.orig 2>/dev/null; ls src") == ""
    assert unmatched_glob_stops(error, "rm -f src/*.orig") == "src/*.orig"
    assert unmatched_glob_stops(error, "ls src/*.orig && git status") == ""  # bash's ls fails too
    assert unmatched_glob_stops(error, "cd app && rm -rf src/*.orig") == "src/*.orig"


def test_a_shell_that_is_not_elevated_is_a_windows_fact(
    tmp_path: Path, layout: AgentsLayout
) -> None:
    session = (
        ClaudeSession()
        .user("turn the firewall rule for port 8080 on")
        .bash(
            'netsh advfirewall firewall add rule name="api" dir=in localport=8080 protocol=TCP '
            "action=allow",
            "Exit code 1\nThe requested operation requires elevation (Run as administrator).",
            error=True,
        )
        .say("This needs an administrator terminal; please run the command there.")
    )
    found = _found(session, tmp_path, layout)
    assert len(found) == 1
    assert "requires elevation" in found[0] and "not elevated" in found[0]
