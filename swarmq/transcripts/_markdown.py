"""Plain Markdown or text transcripts: exported chats, hand-written session notes.

The text is cut into paragraphs at blank lines (never inside a fenced code block); a speaker
line such as ``## User``, ``**Assistant:**``, ``Human:`` or ``Codex:`` sets the role of the
paragraphs that follow. A paragraph is capped in size so one giant block cannot exhaust memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from swarmq.transcripts._lines import DEFAULT_MAX_LINE_BYTES, iter_lines
from swarmq.transcripts.model import Message, MessageKind, ReadReport

MAX_PARAGRAPH_CHARS = 32_000

_SPEAKER = re.compile(
    r"^\s{0,3}(?:#{1,6}\s*|\*\*|__)?\s*(user|human|you|me|assistant|claude|codex|ai|agent|model|"
    r"system)\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)
_ROLES = {"user": "user", "human": "user", "you": "user", "me": "user", "system": "system"}
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def read_markdown(
    path: Path,
    report: ReadReport,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    skip: frozenset[MessageKind] = frozenset(),
) -> Iterator[Message]:
    """Yield one message per paragraph, with the current speaker as its role."""
    role = "unknown"
    buffer: list[str] = []
    size = 0
    start = 0
    in_fence = False
    index = 0

    def flush() -> Iterator[Message]:
        nonlocal buffer, size, index
        text = "\n".join(buffer).strip()
        buffer, size = [], 0
        if text:
            yield Message(index, start, role, MessageKind.TEXT, text)
            index += 1

    for line_no, raw in iter_lines(path, report, max_line_bytes=max_line_bytes, keep_blank=True):
        line = raw.decode("utf-8", errors="replace")
        if not in_fence and not line.strip():
            yield from flush()
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            speaker = _speaker(line)
            if speaker is not None:
                yield from flush()
                role, rest = speaker
                report.record("speaker")
                if not rest:
                    continue
                line = rest
        if not buffer:
            start = line_no
        buffer.append(line)
        size += len(line)
        if size >= MAX_PARAGRAPH_CHARS and not in_fence:
            yield from flush()
    yield from flush()
    report.truncated_last_line = False  # a text file may end without a newline
    report.messages = index


def _speaker(line: str) -> tuple[str, str] | None:
    """``("assistant", "rest of line")`` when the line names who is speaking."""
    match = _SPEAKER.match(line)
    if match is None:
        return None
    word, rest = match.group(1).lower(), match.group(2).strip()
    stripped = line.strip()
    # "User: text" or a heading/bold label; a sentence merely starting with "Agent" is not one.
    if not (stripped.startswith(("#", "**", "__")) or ":" in stripped[: len(word) + 6]):
        return None
    return _ROLES.get(word, "assistant"), rest
