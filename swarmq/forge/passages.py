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
_BOLD_LINE = re.compile(r"^\s{0,3}(?:\*\*|__)[^*_\n]{1,78}(?:\*\*|__)\s*[:：]?\s*$")
"""A line that is only a bold label ("**Changes**", "**Next steps**"): a heading in all but name."""


def passages(text: str) -> Iterator[tuple[str, str]]:
    """``(lead-in, passage)`` pairs of one message, in order (empty ones skipped).

    The lead-in is a short paragraph ending in a colon ("Lessons learned:") that introduces the
    list the passage is an item of, or the heading the passage sits under ("## Summary",
    "**Next steps**"); it lends its keywords to the classifier, not its text.
    """
    if "\n" not in text:
        stripped = text.strip()
        if stripped:
            yield "", stripped
        return
    if "```" in text or "~~~" in text:
        text = _FENCED.sub("\n\n", text)
    lead = ""  # a paragraph ending in a colon: it introduces the list after it
    section = ""  # the heading the text sits under, until the next one
    for paragraph in _BLANK.split(text):
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        if all(_is_heading(line) for line in lines):
            section, lead = _heading_text(lines[-1]), ""
            continue
        if _is_heading(lines[0]):
            section, lines = _heading_text(lines[0]), lines[1:]
        items = sum(1 for line in lines if _ITEM.match(line))
        if items >= 2 or (items >= 1 and (lead or section)):
            yield from _items(lines, lead or section)
            lead = ""
            continue
        joined = "\n".join(line for line in lines if not _HEADING.match(line)).strip()
        if joined:
            yield "", joined  # a heading labels the list under it, not prose
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
        elif _is_heading(line):
            if current:
                yield lead, " ".join(current)
            current, in_list = [], False
            lead = _heading_text(line)
        elif not in_list:
            text = line.strip()
            yield "", text
            lead = text if len(text) <= 80 and _introduces(text) else lead
        else:
            current.append(line.strip())
    if current:
        yield lead, " ".join(current)


def _is_heading(line: str) -> bool:
    return _HEADING.match(line) is not None or _BOLD_LINE.match(line) is not None


def _heading_text(line: str) -> str:
    """A heading's words, without its marks ("### 💡 Next steps" → "Next steps:"), read as a
    label that introduces what follows."""
    text = line.strip().lstrip("#").strip().strip("*_").strip().rstrip(":：")
    text = text.lstrip("".join(ch for ch in text[:2] if not ch.isalnum())).strip()
    return f"{text}:" if text else ""


def _introduces(text: str) -> bool:
    """A line ending in a colon, bold or not ("Lessons learned:", "**How it works:**")."""
    return text.rstrip("*_ ").endswith((":", "："))
