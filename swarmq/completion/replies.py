"""Degenerate model replies, recognised before anything is written.

A reply can be well-formed and still worthless: one phrase repeated, the prompt's own
placeholders echoed back, sections present only as headings, ids cited that were never in the
input. Each check returns a reason (recorded in the LLM ledger as a rejected reply) or ``None``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

MIN_WORDS_FOR_REPETITION = 40
_WORD = re.compile(r"\w+")
_PLACEHOLDER = re.compile(
    r"\A(?:todo|tbd|tba|n/?a|none yet|\.\.\.|…|-+|lorem ipsum.*|placeholder.*|\[?insert[^\]]*\]?|"
    r"<[^>]{1,40}>|\{[^}]{1,40}\}|string|text|example|xxx+)\Z",
    re.IGNORECASE,
)
_UUID = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE
)


def repetition(text: str) -> str | None:
    """One line, or one run of words, making up most of a reply of some length."""
    words = _WORD.findall(text.lower())
    if len(words) < MIN_WORDS_FOR_REPETITION:
        return None
    lines = [" ".join(line.split()).lower() for line in text.splitlines() if line.strip()]
    if lines:
        line, count = Counter(lines).most_common(1)[0]
        if count >= 3 and count * 2 > len(lines):
            return f"degenerate reply: one line repeated {count} times ({line[:60]!r})"
    trigrams = list(zip(words, words[1:], words[2:], strict=False))
    distinct = len(set(trigrams)) / len(trigrams)
    if distinct < 0.3:
        return f"degenerate reply: repetitive ({distinct:.0%} distinct word trigrams)"
    return None


def placeholder(value: str) -> bool:
    """Whether a field or section body says nothing (``TODO``, ``...``, ``<name>``, empty)."""
    cleaned = " ".join(value.replace("*", " ").replace("_", " ").split()).strip(" .:-")
    return not cleaned or _PLACEHOLDER.match(cleaned.strip()) is not None


def unknown_ids(text: str, source: str, known: Iterable[str] = ()) -> list[str]:
    """Entry ids (UUIDs) the reply cites that appear neither in the input nor in ``known``."""
    allowed = {i.lower() for i in known} | {m.lower() for m in _UUID.findall(source)}
    return sorted({m for m in _UUID.findall(text) if m.lower() not in allowed})
