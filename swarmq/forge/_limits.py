"""Whether a passage of the agent's own prose states a limit of the machine it works on.

Measured over every labelled forge set at the code each set was first read with (sets of users
no rule had been written on; docs/QUALITY.md, "a precision gate that transfers to unseen users"),
the agent's own prose was the one family of candidates whose precision stayed low on every set:
about one candidate in seven matched a lesson, against six in ten for the lessons mined from
failed calls. What the agent says is mostly its work (a plan, a report, relayed documentation,
the code it wrote), which reads like a lesson to any rule and differs from user to user. The
passages that were lessons often said what the machine could not do: a program not installed,
a write the sandbox refused, a network that was blocked. That vocabulary is the same for every
user, so it is what an agent passage must hold to stay a candidate.
"""

from __future__ import annotations

import re

_LIMIT = re.compile(
    r"not installed|not found|cannot|can't|can not|blocked|sandbox|permission|no such"
    r"|not available|未インストール|没有|不支持|无法|できません",
    re.IGNORECASE,
)
"""Words that say the machine lacks or refuses something (English, Japanese, Chinese)."""


def states_a_limit(text: str) -> bool:
    """Whether ``text`` says the machine lacks or refuses something (a program, a permission,
    the network): the one kind of the agent's own prose that was a lesson across users."""
    return _LIMIT.search(text) is not None
