"""Recognising a transcript's format from its first records, not from its name.

Up to :data:`SNIFF_LINES` non-blank lines (at most :data:`SNIFF_BYTES`) are parsed and each
record votes for the format whose markers it carries; malformed lines abstain, so a transcript
whose first line is torn is still recognised. Text that is not JSON is Markdown.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from swarmq.errors import InvalidInput
from swarmq.storage.boundedjson import loads_bounded
from swarmq.transcripts.model import TranscriptFormat

SNIFF_LINES = 32
SNIFF_BYTES = 1024 * 1024

_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation"}
)
_CODEX_ENVELOPE = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)


class TranscriptFormatError(InvalidInput):
    """The file is JSON Lines but no reader recognises its records."""


def vote(record: dict[str, Any]) -> TranscriptFormat | None:
    """Which format a single record belongs to, or ``None`` when it carries no marker."""
    rtype = record.get("type")
    if "payload" in record and rtype in _CODEX_ENVELOPE:
        return TranscriptFormat.CODEX_ROLLOUT
    if record.get("record_type") == "state":
        return TranscriptFormat.CODEX_ROLLOUT
    if (
        rtype is None
        and "id" in record
        and "timestamp" in record
        and ("instructions" in record or "git" in record)
    ):
        return TranscriptFormat.CODEX_ROLLOUT
    if (
        rtype == "message"
        and "role" in record
        and "content" in record
        and "sessionId" not in record
    ):
        return TranscriptFormat.CODEX_ROLLOUT
    if "session_id" in record and "ts" in record and "text" in record:
        return TranscriptFormat.CODEX_HISTORY
    if rtype in _CLAUDE_TYPES and (
        "sessionId" in record
        or "parentUuid" in record
        or "uuid" in record
        or "leafUuid" in record
        or "messageId" in record
    ):
        return TranscriptFormat.CLAUDE_CODE
    return None


def detect_format(path: Path) -> TranscriptFormat:
    """The format of ``path``; raises :class:`TranscriptFormatError` for unrecognised JSONL."""
    votes: Counter[TranscriptFormat] = Counter()
    parsed = 0
    text_lines = 0
    seen = 0
    with path.open("rb") as handle:
        budget = SNIFF_BYTES
        while seen < SNIFF_LINES and budget > 0:
            raw = handle.readline(budget)
            if not raw:
                break
            budget -= len(raw)
            if not raw.strip():
                continue
            seen += 1
            try:
                value = loads_bounded(raw)
            except ValueError:
                stripped = raw.lstrip()
                if not stripped.startswith((b"{", b"[")):
                    text_lines += 1
                continue
            if not isinstance(value, dict):
                text_lines += 1
                continue
            parsed += 1
            choice = vote(value)
            if choice is not None:
                votes[choice] += 1
    if votes:
        return votes.most_common(1)[0][0]
    if parsed == 0:
        return TranscriptFormat.MARKDOWN
    if text_lines > parsed:
        return TranscriptFormat.MARKDOWN
    raise TranscriptFormatError(
        f"{path}: JSON Lines, but none of the first {seen} records looks like a Claude Code "
        "session, a Codex rollout or a Codex history file; pass the format explicitly if it is one"
    )
