"""Claude Code session JSONL (``~/.claude/projects/<project>/<session-uuid>.jsonl``).

Each line is one record: ``user`` / ``assistant`` carry an Anthropic ``message`` whose content is
a string or a list of blocks (``text``, ``tool_use``, ``tool_result``, ``thinking``); ``system``
records mark compaction boundaries and hook output; ``summary`` lines hold session summaries.
A user record with ``isCompactSummary`` is the summary written when the context was compacted.
Sub-agent (Task tool) traffic sits in the same file with ``isSidechain: true``. Bookkeeping
records (file-history snapshots, queue operations, progress) are counted, not mined.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.memory.transcripts.lines import DEFAULT_MAX_LINE_BYTES, iter_json_records
from swarmq.memory.transcripts.model import Message, MessageKind, ReadReport, TranscriptFormat

MESSAGE_TYPES = frozenset({"user", "assistant", "system", "summary"})
BOOKKEEPING_TYPES = frozenset(
    {"file-history-snapshot", "queue-operation", "progress", "attachment", "custom-title",
     "agent-name", "x-command"}
)
"""Record types Claude Code writes that hold no conversation text."""

TOOL_TEXT_LIMIT = 2000
"""Tool inputs and results are noise to forge; keep only a prefix of them."""

_META_PREFIXES = ("<command-name>", "<command-message>", "<local-command-stdout>",
                  "<local-command-stderr>", "<system-reminder>", "Caveat: The messages below")


def read_claude(
    path: Path, report: ReadReport, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[Message]:
    """Yield the messages of a Claude Code session file in file order."""
    index = 0
    for line_no, record in iter_json_records(path, report, max_line_bytes=max_line_bytes):
        kind = record.get("type")
        if not isinstance(kind, str):
            report.record("<no type>", known=False)
            continue
        if kind not in MESSAGE_TYPES:
            report.record(kind, known=kind in BOOKKEEPING_TYPES)
            continue
        report.record(kind)
        session = record.get("sessionId")
        if isinstance(session, str) and report.session_id is None:
            report.session_id = session
        for message in _messages(record, kind, line_no):
            message.index = index
            index += 1
            yield message
    report.messages = index


def _messages(record: dict[str, Any], kind: str, line_no: int) -> Iterator[Message]:
    timestamp = _str(record.get("timestamp"))
    session = _str(record.get("sessionId"))
    sidechain = record.get("isSidechain") is True
    meta = record.get("isMeta") is True

    def make(role: str, mkind: MessageKind, text: str, tool: str | None = None) -> Message:
        is_meta = meta or (mkind is MessageKind.TEXT and text.lstrip().startswith(_META_PREFIXES))
        return Message(0, line_no, role, mkind, text, timestamp, session, tool, sidechain, is_meta)

    if kind == "summary":
        text = _str(record.get("summary"))
        if text:
            yield make("system", MessageKind.SUMMARY, text)
        return
    if kind == "system":
        text = _str(record.get("content"))
        if text:
            yield make("system", MessageKind.SYSTEM, text)
        return
    message = record.get("message")
    if not isinstance(message, dict):
        return
    role = _str(message.get("role")) or kind
    content = message.get("content")
    if record.get("isCompactSummary") is True:
        text = _joined_text(content)
        if text:
            yield make(role, MessageKind.COMPACTION, text)
        return
    if isinstance(content, str):
        if content.strip():
            yield make(role, MessageKind.TEXT, content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = _str(block.get("text"))
            if text.strip():
                yield make(role, MessageKind.TEXT, text)
        elif btype in ("tool_use", "server_tool_use"):
            name = _str(block.get("name")) or None
            yield make(role, MessageKind.TOOL_USE, _clip(_compact(block.get("input"))), name)
        elif btype == "tool_result" or (isinstance(btype, str) and btype.endswith("_tool_result")):
            yield make(role, MessageKind.TOOL_RESULT, _clip(_joined_text(block.get("content"))))
        elif btype in ("thinking", "redacted_thinking"):
            text = _str(block.get("thinking"))
            if text.strip():
                yield make(role, MessageKind.THINKING, text)


def _joined_text(content: Any) -> str:
    """Text of a string or of a list of ``text`` blocks (tool results and summaries)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if p)
    return ""


def _compact(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


def _clip(text: str) -> str:
    return text if len(text) <= TOOL_TEXT_LIMIT else text[:TOOL_TEXT_LIMIT]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


FORMAT = TranscriptFormat.CLAUDE_CODE
