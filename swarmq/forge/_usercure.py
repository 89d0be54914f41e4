"""The user's word that a missing program is there now: the cure nobody's call shows.

When a program is missing and the agent has no way to install it (no root, no package manager
it may use), the user installs it outside the session and says so in their next message ("try
again, cmake is installed now"). No call of the transcript shows the install, so the lesson's
cure is the user's sentence, quoted: the next session learns both that the program was missing
and that the user, not the agent, put it there."""

from __future__ import annotations

import re

from swarmq.forge._calls import clip

MAX_TOLD_CHARS = 400
"""A longer user message is a new request or a pasted log, not a word about the failure."""
QUOTED_CHARS = 160
"""How much of the user's message the lesson quotes."""
_INSTALLED = r"(?:installed|set up|available)"
_ASKED = re.compile(
    r"\?\s*$|^\s*(?:please|can you|could you|pls)\b|n't\b|\bnot\b|\bnever\b", re.IGNORECASE
)
"""A request for the install ("can you install cmake?") or a denial ("I haven't installed
cmake") states no cure: nothing is done yet."""


def installed_now(missing: str, text: str) -> str:
    """The user's message, clipped, when it says that ``missing`` is installed (``"cmake is
    installed now"``, ``"I installed cmake"``, ``"installed cmake, go on"``); ``""`` when it
    does not, asks for the install, or is too long to be such a word."""
    if not missing or len(text) > MAX_TOLD_CHARS or _ASKED.search(text):
        return ""
    name = re.escape(missing)
    says = re.compile(
        rf"\b{name}\b\s*(?:is|was|has been|'s|got)\s+(?:now\s+)?{_INSTALLED}\b|"
        rf"\b{_INSTALLED}\s+(?:the\s+)?{name}\b",
        re.IGNORECASE,
    )
    if says.search(text) is None:
        return ""
    return clip(" ".join(text.split()).replace('"', "'"), QUOTED_CHARS)


__all__ = ["installed_now"]
