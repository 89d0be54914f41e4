"""A fact of the machine the user tells in a few words: what is installed, and how.

"teams is installed as a pwa", "on host, you have yq to process yaml in cli": the user states
what the machine has, once, in a short message without the classifier's cue words. Every later
session on the machine needs it (the agent would otherwise look for the program, install
another, or launch it the wrong way), which makes it a lesson.

What is not such a fact: a question; a notice that something was just installed so the agent
can try again ("cmake is installed now, try again"), which belongs to the failure it cures
(:mod:`._usercure`); a longer message, which is a task that mentions a program; and "you have
not …", which is a reproach.
"""

from __future__ import annotations

import re

from swarmq.forge._standing import short_request

MAX_CHARS = 100
MAX_RAW_CHARS = 2000

_TOLD = re.compile(
    r"^\W*[\w.+-]+(?: [\w.+-]+)? (?:is|are) (?:already )?installed\b"
    r"|\byou (?:have|can use) (?!not\b|been\b|done\b|to\b|a look\b)`?[\w.+-]+`? "
    r"(?:to|for|available|installed|on|in)\b",
    re.IGNORECASE,
)
_CHANGED_NOW = re.compile(r"\bnow\b|\btry again\b|\bretry\b|\bjust\b", re.IGNORECASE)
"""A program installed a moment ago for a retry: the cure of a failure, not a standing fact."""


def told_fact(text: str) -> str | None:
    """The machine fact the user tells in ``text`` (whitespace joined), or None. The cheap
    tests come first: this runs on every message the user types."""
    said = short_request(text, MAX_CHARS, MAX_RAW_CHARS)
    if said is None or len(said) > MAX_CHARS:
        return None
    folded = said.casefold()
    if "installed" not in folded and "you " not in folded:
        return None  # each of _TOLD's two forms needs one of these: the search is skipped
    if _TOLD.search(said) is None or _CHANGED_NOW.search(said):
        return None
    return said


__all__ = ["told_fact"]
