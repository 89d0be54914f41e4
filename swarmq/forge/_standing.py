"""A user's standing instruction: a short message that says how to work from now on.

"do not auto commit", "ask me when you need to checkout, I will do it manually", "dont build
the pipeline in a single file": the user states a rule for every later turn, in a few words and
without any of the classifier's cue words (no "decided", no reason), so the classifier finds no
signal, or finds the message too short. The rule holds beyond the turn it is said in, which is
what makes it a lesson; a long message that opens the same way is a task description, a
question asks rather than rules, and "don't X, just Y" or "don't X, I want Y" redirects the
current step.

Codex's IDE extension wraps a prompt in its editor context ("# Context from my IDE setup: …
## My request for Codex:"); the request after that heading is what the user typed.
"""

from __future__ import annotations

import re

MAX_CHARS = 240
"""Longer messages that open with "don't" describe a task with a constraint, not a rule."""
MIN_CHARS = 15
MAX_RAW_CHARS = 2000
"""Past this a message is no short rule even with an editor's context around it: rejected before
any other work (most user messages of a long session are long)."""

_IDE_REQUEST = "## My request for Codex:"

_STANDING = re.compile(
    r"\W*(?:please[, ]+)?(?:"
    r"(?:do not|don'?t|dont|never)\s+"
    r"(?!worry|mind|know|understand|see|think|have|need|get|forget|care|bother|be\b)\w"
    r"|always\s+\w"
    r"|ask me (?:when|before|if|whenever)\b"
    r"|from now on\b|going forward\b"
    r")",
    re.IGNORECASE,
)
_FROM_NOW_ON = re.compile(r"\b(?:from now on|going forward)\W*$", re.IGNORECASE)
"""A rule's opening ("do not …", "always …", "ask me when …", "from now on …"), or a rule that
ends in "from now on"; "don't worry", "don't know" and the like are talk, not rules."""

_REDIRECT = re.compile(
    r"\bjust\b|\binstead\b|\bfor now\b|\byet\b|\bi (?:want|need|would like)\b", re.IGNORECASE
)
""""do not run the simulator, just find out how …", "don't hard code the roles, i want the roles
to be …": the current step redirected to what the user wants of this task, not a rule."""


def request_text(text: str) -> str:
    """What the user typed, without an editor's context wrapped around it."""
    at = text.find(_IDE_REQUEST)
    return text[at + len(_IDE_REQUEST) :] if at >= 0 else text


def short_request(text: str, max_chars: int, max_raw_chars: int) -> str | None:
    """What the user typed in ``text``, whitespace joined, unless it is long (past
    ``max_raw_chars`` as sent, or twice ``max_chars`` as typed) or asks a question: the cheap
    first test of the rules that read every message the user types for a short statement (a
    choice of language, a fact of the machine told)."""
    if len(text) > max_raw_chars:
        return None
    request = request_text(text)
    if len(request) > 2 * max_chars or "?" in request or "？" in request:
        return None
    return " ".join(request.split())


def standing_instruction(text: str) -> str | None:
    """The user's standing instruction in ``text`` (whitespace joined), or None. The cheap tests
    come first: this runs on every message the user types."""
    if len(text) > MAX_RAW_CHARS:
        return None
    request = request_text(text)
    if len(request) > 2 * MAX_CHARS or "?" in request or "？" in request:
        return None
    if _STANDING.match(request) is None and _FROM_NOW_ON.search(request) is None:
        return None
    said = " ".join(request.split())
    if not MIN_CHARS <= len(said) <= MAX_CHARS or _REDIRECT.search(said) is not None:
        return None
    return said
