"""A user's standing instruction ("do not auto commit") is a lesson; a redirected step is not.

Small sessions written for these tests, in Claude Code's record shapes; the instructions have the
shapes seen on unseen users (a bare "do not …", "ask me when …", a rule ending "from now on", a
request inside Codex's IDE context), none of their words.
"""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._standing import standing_instruction
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _found

_IDE = (
    "# Context from my IDE setup:\n\n## Open tabs:\n- app.py: app.py\n\n"
    "## My request for Codex:\n{}\n"
)


def test_a_short_do_not_is_kept(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("tidy the readme")
        .say("Done, and committed the change.")
        .user("do not commit on your own")
    )
    assert _found(session, tmp_path, layout) == ["do not commit on your own"]


def test_ask_me_before_is_kept(tmp_path: Path, layout: AgentsLayout) -> None:
    rule = "ask me before you switch branches. I switch them myself and tell you when to go on"
    assert _found(ClaudeSession().user(rule), tmp_path, layout) == [rule]


def test_the_request_inside_an_ide_context_is_read() -> None:
    assert standing_instruction(_IDE.format("never put two services in one file")) == (
        "never put two services in one file"
    )
    assert standing_instruction("no pushing to the remote from now on") is not None
    assert standing_instruction("Always answer in Portuguese.") is not None


def test_talk_questions_and_redirects_are_no_rule(tmp_path: Path, layout: AgentsLayout) -> None:
    for said in (
        "don't worry about the warnings in the log",
        "do not delete the cache, just find out what fills it",
        "don't hard code the ports, i want them read from the environment",
        "never mind, the build works now",
        "don't you think the cache is too big?",
        "do it",
    ):
        assert standing_instruction(said) is None, said
    long_task = "don't stop until " + "the importer reads every sheet and every column " * 6
    assert standing_instruction(long_task) is None
    session = ClaudeSession().user("do not delete the cache, just find out what fills it")
    assert _found(session, tmp_path, layout) == []
