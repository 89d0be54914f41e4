"""An agent's diagnosis ("the root cause is …", "the issue is that …") is a hypothesis until what
follows bears it out.

Debugging sessions are full of them, and the next session proves most wrong: on held-apart
sessions every root-cause claim forge kept was a false lesson — floating point blamed for a
two-cent difference the user then showed was not fixed by rounding, a claim announced at the
session's very end with nothing after it, a cause the user answered by interrupting. So a
diagnosis is held, not kept, and settled by what comes next:

- a later diagnosis before the user speaks again **supersedes** it (the agent changed its mind);
- a user message that says it did not work, or interrupts, **disowns** it;
- any other user message **keeps** it (the user went on from it: asked for the next step,
  reported the next error);
- at the session's end it is kept only if the agent changed a file after it (it acted on it);
  a diagnosis nothing followed is dropped.

A diagnosis that states its own fix ("… Fixed by taking the lock first.") reports what was done,
not a guess, and is kept at once.
"""

from __future__ import annotations

import re

_DIAGNOSIS = re.compile(
    r"\broot[- ]cause\b|\bthe (?:real |actual |underlying )?(?:issue|problem|bug|culprit) "
    r"(?:is|was)\b|\bfound the (?:issue|problem|bug|culprit)\b|\bis caused by\b|"
    r"\bwas caused by\b",
    re.IGNORECASE,
)
_DISOWNED = re.compile(
    r"\b(?:did(?:n'?t| not)|does(?:n'?t| not)|still (?:not|doesn'?t|fails?|broken|the same|"
    r"shows?|getting|get)|not (?:fixed|working|correct(?:ed)?|it)|same (?:error|issue|problem)|"
    r"wrong|no,)\b|\[Request interrupted by user",
    re.IGNORECASE,
)


_RESOLVED = re.compile(
    r"\b(?:fixed|resolved|solved) (?:it |this |that )?by\b|\bthe fix (?:is|was)\b|"
    r"\b(?:now|which) (?:works|passes|succeeds)\b",
    re.IGNORECASE,
)


def is_diagnosis(text: str) -> bool:
    """Whether a passage states a cause the agent arrived at, and not yet how it was fixed."""
    return _DIAGNOSIS.search(text) is not None and _RESOLVED.search(text) is None


def disowns(user_text: str) -> bool:
    """Whether a user's message says the last attempt did not work (or cut the agent off)."""
    return _DISOWNED.search(user_text[:400]) is not None


__all__ = ["disowns", "is_diagnosis"]
