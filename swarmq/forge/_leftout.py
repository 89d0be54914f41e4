"""A retry that only leaves words out of the failed call is no cure of what the error says.

When the call that works next is the failed call with some of its words left out and nothing
added (``DEVBOX_DEBUG=1 devbox shell`` timed out, ``devbox shell`` returned; ``& "…\\verify.ps1"
-Detailed`` could not be parsed, the same script without ``-Detailed`` ran; a ``find`` whose
``\\(`` … ``\\)`` the shell refused, run without the grouping), the agent did less, not
otherwise: nothing shows the left-out words caused the failure, and the lesson "X failed; the
shorter X worked instead" teaches a wrong cure (or none: the shorter call does another thing).

Two cases are cures all the same, whatever the program: the error names a word that was left
out (``unknown flag: --command``, ``sudo: a terminal is required``: the refused part is gone),
or the error is about the machine (permission denied, ``EACCES``, no terminal, a time limit):
leaving a part out (``-g`` of a global install that could not write ``/usr/lib``, ``-it`` of a
``docker exec`` with no terminal) avoids what the machine refused. And the shorter call must be
the same step: its program and first argument as the failed call's (``docker ps`` run alone
after ``docker exec $(docker ps …) …`` is the inner command run first, the shell's advice, and
``apply_patch …`` after ``pwsh -Command apply_patch << …`` leaves a wrapper out, not a part).

What the agent did between the two calls may still be the cure: when it edited a file the failed
command names (the script that failed to parse) before the shorter call worked, the edit is the
cure and the miner keeps the lesson about it (:func:`._calls.edited_named`); this module only
says the left-out words were none.
"""

from __future__ import annotations

import re

_MACHINE = re.compile(
    r"operation not permitted|permission denied|\bEPERM\b|\bEACCES\b|access (?:is )?denied|"
    r"read-only file system|not a tty|no tty|not a terminal|timed out|sandbox|killed|"
    r"out of memory|no space left",
    re.IGNORECASE,
)
"""Errors about the machine (a refusal, no terminal, a limit): a shorter call may be the way
round, whatever words it left out."""
_ERROR_WORD = re.compile(r"[a-z][a-z0-9_]{3,}")
"""A word of an error that may be part of a left-out word (``tasks`` of ``-RequireTasks``)."""

_EDGES = "'\"`\\()[]{},;-"
"""What surrounds a word in a command or an error (quotes, escapes, brackets) and is no part
of the name the error may give it."""


def _named(word: str, error: str) -> bool:
    """Whether ``error`` (lower-cased) names ``word``: the word, stripped of its quotes, escapes
    and option dashes, has a letter or digit and stands in the error as a whole token, or a word
    of the error is part of it (``tasks.md not found`` for ``-RequireTasks``)."""
    bare = word.strip(_EDGES)
    if not any(ch.isalnum() for ch in bare):
        return False  # punctuation alone (``\\(``): an error's "near `('" is no name of it
    if re.search(rf"(?<![\w-]){re.escape(bare)}(?![\w-])", error) is not None:
        return True
    return any(part in bare for part in _ERROR_WORD.findall(error))


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
    if not dropped or _MACHINE.search(error) or call.split()[:2] != failed.split()[:2]:
        return False  # a way round the machine, or another step (an inner command, unwrapped)
    lowered = error.lower()
    return not any(_named(word, lowered) for word in dropped)
