"""What the user tells of the machine in a few words ("X is installed as …", "you have X to …")
is a lesson; a notice for a retry, a question, a reproach or a task is not.

Small sessions written for these tests, in Claude Code's record shapes; the facts have the
shapes seen on two users, none of their words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._toldfacts import told_fact
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession


def test_a_program_the_user_says_is_installed_is_kept(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("add a shortcut that opens the mail client")
        .say("Which mail client do you use, and how is it installed?")
        .user("thunderbird is installed as a flatpak")
    )
    path = session.write(tmp_path / "s.jsonl")
    found = forge_transcript(path, layout, LocalLocks(tmp_path / "l")).found
    assert [(c.content, c.type) for c in found] == [
        ("thunderbird is installed as a flatpak", "learning")
    ]


@pytest.mark.parametrize(
    "said",
    ["in the container, you have jq for json on the command line", "ripgrep is already installed"],
)
def test_both_forms_are_read(said: str) -> None:
    assert told_fact(said) == said


@pytest.mark.parametrize(
    "said",
    [
        "ninja is installed now, try again",
        "is docker installed?",
        "you have not updated the changelog",
        "you have to restart the server after every change to the config",
        "the service is installed on every node of the cluster, so write an ansible role that "
        "rolls the new config out to all of them and restarts them one by one",
    ],
)
def test_retries_questions_reproaches_and_tasks_are_no_fact(said: str) -> None:
    assert told_fact(said) is None
