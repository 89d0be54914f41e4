"""A retry that only leaves words out of the failed call is no cure of what the error says.

When the call that works next is the failed call with some of its words left out and nothing
added (``DEVBOX_DEBUG=1 devbox shell`` timed out, ``devbox shell`` returned; ``& "…\\verify.ps1"
-Detailed`` could not be parsed, the same script without ``-Detailed`` ran; a ``find`` whose
``\\(`` … ``\\)`` the shell refused, run without the grouping), the agent did less, not
otherwise: nothing shows the left-out words caused the failure, and the lesson "X failed; the
shorter X worked instead" teaches a wrong cure (or none: the shorter call does another thing).

Two cases are cures all the same, whatever the program: the error names a word that was left
out (``unknown flag: --command``, ``sudo: a terminal is required``: the refused part is gone),
or the machine refused the call (permission denied, ``EACCES``, ``EPERM``): leaving a part out
(``-g`` of a global install that could not write ``/usr/lib``) avoids what was refused.
"""

from __future__ import annotations

import re

_REFUSED = re.compile(
    r"operation not permitted|permission denied|\bEPERM\b|\bEACCES\b|access (?:is )?denied|"
    r"read-only file system",
    re.IGNORECASE,
)
"""Errors where the machine refused the call: a shorter call may be the way round."""

_EDGES = "'\"`\\()[]{},;"
"""What surrounds a word in a command or an error (quotes, escapes, brackets) and is no part
of the name the error may give it."""


def _named(word: str, error: str) -> bool:
    """Whether ``error`` (lower-cased) names ``word``: the word, stripped of its quotes and
    escapes, has a letter or digit and stands in the error as a whole token."""
    bare = word.strip(_EDGES)
    if not any(ch.isalnum() for ch in bare):
        return False  # punctuation alone (``\\(``): an error's "near `('" is no name of it
    return re.search(rf"(?<![\w-]){re.escape(bare)}(?![\w-])", error) is not None


def left_out(failed: str, call: str) -> list[str]:
    """The words of ``failed`` that ``call`` leaves out, when ``call`` is ``failed`` with some
    words left out and none added or changed (both normalised: lower case, single spaces);
    ``[]`` when ``call`` adds, changes or reorders a word, or leaves nothing out."""
    kept = call.split()
    words = failed.split()
    if not kept or len(kept) >= len(words):
        return []
    dropped: list[str] = []
    position = 0
    for word in words:
        if position < len(kept) and word == kept[position]:
            position += 1
        else:
            dropped.append(word)
    return dropped if position == len(kept) else []


def only_left_out(failed: str, call: str, error: str) -> bool:
    """Whether ``call`` (normalised) is ``failed`` (normalised) with words left out that the
    error does not name, after an error that is no refusal of the machine: no cure of it."""
    dropped = left_out(failed, call)
    if not dropped or _REFUSED.search(error):
        return False
    lowered = error.lower()
    return not any(_named(word, lowered) for word in dropped)
