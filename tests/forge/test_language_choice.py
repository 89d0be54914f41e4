"""A user's choice of the language the agent speaks or writes in is a lesson; a translation, a
question about a language or a task that mentions one is not.

Small sessions written for these tests, in Claude Code's record shapes; the choices have the
shapes seen on unseen users (a bare request naming a language with a verb of answering or
writing, in the language asked for), none of their words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge import _language
from swarmq.forge._language import language_choice
from tests.forge.sessions import ClaudeSession
from tests.forge.sessions import forged as _found


def test_a_short_choice_of_language_is_kept(tmp_path: Path, layout: AgentsLayout) -> None:
    session = (
        ClaudeSession()
        .user("set up the linter")
        .say("The linter is set up and the config committed.")
        .user("antworte mir bitte auf Englisch")
    )
    found = _found(session, tmp_path, layout)
    assert found == ["antworte mir bitte auf Englisch"]


@pytest.mark.parametrize(
    "said",
    [
        "please reply to me in Portuguese from here",
        "respóndeme en inglés",
        "réponds-moi en anglais",
        "responda sempre em português",
        "отвечай мне на английском",
        "以后请用英文回答",
        "回答请用简体中文",
        "説明は英語で書いて",
        "영어로 대답해줘",
    ],
)
def test_each_language_family_is_read(said: str) -> None:
    assert language_choice(said) == said


@pytest.mark.parametrize(
    "said",
    [
        "translate the readme into German",
        "why did you answer in French",
        "how do I make it reply in Spanish",
        "write the error messages in Chinese characters in the code",
        "add a settings page where the user picks the language, write its labels in English "
        "and in German, and store the choice in local storage next to the theme",
        "can you answer in Korean?",
    ],
)
def test_translations_questions_and_tasks_are_no_choice(said: str) -> None:
    assert language_choice(said) is None


_PHRASES = (
    "answer in English",
    "reply to me in thai",
    "WRITE IN ENGLISH",
    "(in english)",
    "rispondi in italiano",
    "schreib auf deutsch",
    "responda em portugues",
    "write everything in Traditional Chinese",
    "talk in Korean",
    "parle en francais",
    "reply_in english2",
    "in-english",
    "please",
    "always",
    "from now on",
    "the tests",
    "fix the module",
    "run it again",
    "in",
    "en",
)
"""Matching phrases of every ASCII pattern, and fillers around them."""


@example(["answer in English"])
@example(["schreib auf deutsch"])
@given(st.lists(st.sampled_from(_PHRASES), min_size=1, max_size=12))
def test_the_word_gate_never_skips_a_message_a_pattern_matches(words: list[str]) -> None:
    """The gate in front of the eight searches is only a saving: wherever one of the patterns
    matches an ASCII message, the gate lets it through."""
    said = " ".join(words)
    if any(choice.search(said) for choice in _language._CHOICES):
        assert _language._may_name_a_language(said)
