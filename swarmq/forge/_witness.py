"""What failed in front of the agent: the text of the session's failed tool calls, so a diagnosis
in the agent's own prose can be told from narration of its work.

On sessions of users no rule was written on, the lessons forge took from the agent's prose were
right about two times in five (docs/QUALITY.md, "Narration needs a witness"): an agent explains the
code it is writing, the plan it chose, the tests it added, and every such sentence reads like a
lesson. The ones that were lessons spoke of something that had failed in front of it: a program
that was missing, a file a tool refused, an error a command printed. So a passage of the agent's
prose stays a candidate only when it names (in code spans or identifier-shaped words) something
that a failed call or its output named earlier in the session, or names the program of a failed
call ("Node.js is not installed" after `node` failed)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

_NAMES = re.compile(
    r"`([^`\n]{2,80})`"
    r"|\b([A-Za-z_]\w*[._\-/][\w.\-/]+"  # dotted, slashed, hyphenated: files, modules, flags
    r"|[A-Za-z]+\d\w*"  # letters then digits: python3, v2, es2022
    r"|[a-z]+[A-Z]\w+"  # camelCase
    r"|[A-Z_]{4,})\b"  # CONSTANTS, ENV_VARS
)
"""The words of a passage that name a thing rather than say something about it."""

_KEPT_CHARS = 3_000
"""Of each failed call's output (and of its call), what is kept: the error is at the start."""

_WORDS = re.compile(r"[\w][\w+]*")
"""Words as a program is named in prose (``node`` in "Node.js", ``g++``)."""

_MIN_PROGRAM = 3
"""Shorter program names (``cd``, ``ls``) are words of prose too."""

_MAX_PROGRAMS = 1_000

_MAX_CHARS = 512_000
"""What the witness keeps at most (about 170 failures); the oldest go first, so memory and the
time to judge a passage stay bounded (a few ms at the cap)."""


def names(text: str) -> set[str]:
    """The lower-cased names (code spans, identifier-shaped words) ``text`` holds."""
    out = set()
    for match in _NAMES.finditer(text):
        name = (match.group(1) or match.group(2)).strip().lower()
        if len(name) >= 3:
            out.add(name)
    return out


@dataclass
class FailureWitness:
    """The failed calls of one session so far, lower-cased, bounded."""

    seen: deque[str] = field(default_factory=deque)
    chars: int = 0
    programs: set[str] = field(default_factory=set)

    def saw(self, output: str, call: str, program: str) -> None:
        """Keep what a failed call and its output said, and the program it ran."""
        if len(program) >= _MIN_PROGRAM and len(self.programs) < _MAX_PROGRAMS:
            self.programs.add(program.lower())
        text = f"{output[:_KEPT_CHARS]}\n{call[:_KEPT_CHARS]}".lower()
        self.seen.append(text)
        self.chars += len(text)
        while self.chars > _MAX_CHARS and len(self.seen) > 1:
            self.chars -= len(self.seen.popleft())

    def names_any(self, passage: str) -> bool:
        """Whether ``passage`` names something a failed call of the session showed."""
        if not self.seen:
            return False
        wanted = names(passage)
        if any(name in text for text in self.seen for name in wanted):
            return True
        words = set(_WORDS.findall(passage.lower()))
        return not self.programs.isdisjoint(words)
