"""Cutting a message into passages the classifier can judge one at a time.

A decision rarely fills a whole message: it is one paragraph, or one bullet of a compaction
summary. Fenced code is dropped first (a listing is evidence, not the lesson), then the text is
cut at blank lines, and a paragraph that is a list is cut into its items.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCED = re.compile(r"^\s{0,3}(```|~~~).*?^\s{0,3}\1[^\n]*$", re.DOTALL | re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\n")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


def passages(text: str) -> Iterator[tuple[str, str]]:
    """``(lead-in, passage)`` pairs of one message, in order (empty ones skipped).

    The lead-in is a short paragraph ending in a colon ("Lessons learned:") that introduces the
    list the passage is an item of; it lends its keywords to the classifier, not its text.
    """
    if "\n" not in text:
        stripped = text.strip()
        if stripped:
            yield "", stripped
        return
    if "```" in text or "~~~" in text:
        text = _FENCED.sub("\n\n", text)
    lead = ""
    for paragraph in _BLANK.split(text):
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        items = sum(1 for line in lines if _ITEM.match(line))
        if items >= 2 or (items >= 1 and (lead or (len(lines) > 1 and _HEADING.match(lines[0])))):
            yield from _items(lines, lead)
            lead = ""
            continue
        joined = "\n".join(line for line in lines if not _HEADING.match(line)).strip()
        if joined:
            yield "", joined
        lead = joined if len(joined) <= 80 and _introduces(joined) else ""


def _items(lines: list[str], lead: str) -> Iterator[tuple[str, str]]:
    """List items with their continuation lines; text before the first item is a passage of
    its own and, when it ends in a colon, the lead-in of the items."""
    current: list[str] = []
    in_list = False
    for line in lines:
        if _ITEM.match(line):
            if current:
                yield lead, " ".join(current)
            current = [_ITEM.sub("", line, count=1).strip()]
            in_list = True
        elif _HEADING.match(line):
            if current:
                yield lead, " ".join(current)
            current, in_list = [], False
            lead = ""
        elif not in_list:
            text = line.strip()
            yield "", text
            lead = text if len(text) <= 80 and _introduces(text) else lead
        else:
            current.append(line.strip())
    if current:
        yield lead, " ".join(current)


def _introduces(text: str) -> bool:
    """A line ending in a colon, bold or not ("Lessons learned:", "**How it works:**")."""
    return text.rstrip("*_ ").endswith((":", "："))
