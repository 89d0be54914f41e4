"""Claude Code session JSONL (``~/.claude/projects/<project>/<session-uuid>.jsonl``).

Each line is one record: ``user`` / ``assistant`` carry an Anthropic ``message`` whose content is
a string or a list of blocks (``text``, ``tool_use``, ``tool_result``, ``thinking``); ``system``
records mark compaction boundaries and hook output; ``summary`` lines hold session summaries.
A user record with ``isCompactSummary`` is the summary written when the context was compacted.
Sub-agent (Task tool) traffic sits in the same file with ``isSidechain: true``. Bookkeeping
records (file-history snapshots, queue operations, progress) are counted, not mined.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.transcripts._lines import DEFAULT_MAX_LINE_BYTES, iter_json_records
from swarmq.transcripts.model import (
    Message,
    MessageKind,
    ReadReport,
    ToolSink,
    TranscriptFormat,
)
from swarmq.transcripts.values import clip, clip_result, compact, reports_failure, text_of

MESSAGE_TYPES = frozenset({"user", "assistant", "system", "summary"})
BOOKKEEPING_TYPES = frozenset(
    {
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "custom-title",
        "agent-name",
        "x-command",
    }
)
"""Record types Claude Code writes that hold no conversation text."""


_META_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<system-reminder>",
    "Caveat: The messages below",
    "<local-command-caveat>",
    "<ide_opened_file>",
    "<ide_selection>",
    "Base directory for this skill:",
    "[Request interrupted by user",
)


def read_claude(
    path: Path,
    report: ReadReport,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    skip: frozenset[MessageKind] = frozenset(),
    tools: ToolSink | None = None,
) -> Iterator[Message]:
    """Yield the messages of a Claude Code session file in file order; kinds in ``skip`` are
    numbered and counted but not built; skipped tool calls and results go to ``tools`` if given."""
    index = 0
    counts: dict[str, int] = {}
    tool_call = tools.call if tools is not None else None
    tool_result = tools.result if tools is not None else None
    try:
        for line_no, record in iter_json_records(path, report, max_line_bytes=max_line_bytes):
            kind = record.get("type")
            if kind.__class__ is not str:
                report.record("<no type>", known=False)
                continue
            counts[kind] = counts.get(kind, 0) + 1
            if kind not in MESSAGE_TYPES:
                if kind not in BOOKKEEPING_TYPES:
                    report.unknown_types[kind] += 1
                continue
            if report.session_id is None and isinstance(record.get("sessionId"), str):
                report.session_id = record["sessionId"]
            message: Any = record.get("message")
            content = message.get("content") if message.__class__ is dict else None
            if (
                content.__class__ is str
                and kind in _CHAT
                and record.get("isCompactSummary") is not True
            ):
                if content and not content.isspace():  # a typed prompt: built as _messages would
                    made = _prose(record, line_no, message, kind, content)
                    made.index = index
                    yield made
                    index += 1
                continue
            block: dict[str, Any] | None = (
                content[0]
                if content.__class__ is list
                and len(content) == 1
                and content[0].__class__ is dict
                and not record.get("isCompactSummary")
                else None
            )
            btype = block.get("type") if block is not None else None
            if btype.__class__ is not str:
                btype = None
            if block is not None and btype in _ONE_PROSE and kind in _CHAT:  # most prose records
                if btype == "text":  # built as _messages would, without its general walk
                    text = block.get("text")
                    if text.__class__ is str and text and not text.isspace():
                        made = _prose(record, line_no, message, kind, text)
                        made.index = index
                        yield made
                        index += 1
                    continue
                if MessageKind.THINKING in skip:  # numbered, not built
                    thought = block.get("thinking")
                    index += thought.__class__ is str and thought != "" and not thought.isspace()
                    continue
            if block is not None and btype in _SKIPPABLE:
                tool_kind = _SKIPPABLE[btype]
                if tool_kind not in skip:  # the common case, built without the general walk
                    yield _tool_message(record, message or {}, block, tool_kind, index, line_no)
                elif tool_call is not None and tool_kind is MessageKind.TOOL_USE:
                    tid = block.get("id")
                    tool_call(
                        block.get("name"), block.get("input"), tid if tid.__class__ is str else None
                    )
                elif tool_result is not None:  # inlined: most lines of a session are tool results
                    text = block.get("content")
                    text = clip_result(text if text.__class__ is str else _joined_text(text))
                    stamp = record.get("timestamp")
                    tool_result(
                        text,
                        block.get("is_error") is True or reports_failure(text),
                        index,
                        line_no,
                        stamp if stamp.__class__ is str else None,
                        tid if (tid := block.get("tool_use_id")).__class__ is str else None,
                    )
                index += 1
                continue
            for built in _messages(record, kind, line_no, skip, tools, index):
                if built is not None:
                    built.index = index
                    yield built
                index += 1
    finally:
        report.record_types.update(counts)
        report.messages = index


def _notify(
    tools: ToolSink,
    record: dict[str, Any],
    block: dict[str, Any],
    kind: MessageKind,
    index: int,
    line_no: int,
) -> None:
    if kind is MessageKind.TOOL_USE:
        name = block.get("name")
        tools.call(
            name if name.__class__ is str else None, block.get("input"), _str(block.get("id"))
        )
    else:
        text = clip_result(_joined_text(block.get("content")))
        timestamp = record.get("timestamp")
        tools.result(
            text,
            block.get("is_error") is True or reports_failure(text),
            index,
            line_no,
            timestamp if timestamp.__class__ is str else None,
            _str(block.get("tool_use_id")),
        )


def _tool_message(
    record: dict[str, Any],
    message: dict[str, Any],
    block: dict[str, Any],
    kind: MessageKind,
    index: int,
    line_no: int,
) -> Message:
    """A record holding exactly one tool call or result (most of a session's lines)."""
    role = message.get("role")
    if kind is MessageKind.TOOL_USE:
        name = block.get("name")
        text = clip(compact(block.get("input")))
    else:
        name = None
        text = clip_result(_joined_text(block.get("content")))
    timestamp = record.get("timestamp")
    session = record.get("sessionId")
    built = Message(
        index,
        line_no,
        role if role.__class__ is str and role else str(record.get("type")),
        kind,
        text,
        timestamp if timestamp.__class__ is str and timestamp else None,
        session if session.__class__ is str and session else None,
        name if name.__class__ is str and name else None,
        record.get("isSidechain") is True,
        record.get("isMeta") is True,
    )
    if kind is MessageKind.TOOL_RESULT:
        built.is_error = block.get("is_error") is True or reports_failure(text)
    return built


def _prose(
    record: dict[str, Any], line_no: int, message: dict[str, Any], kind: str, text: str
) -> Message:
    """A one-block prose message, built as :func:`_messages` would (the message's role, else
    the record's type)."""
    role = message.get("role")
    return _make(
        record, line_no, role if role.__class__ is str and role else kind, MessageKind.TEXT, text
    )


def _make(
    record: dict[str, Any],
    line_no: int,
    role: str,
    kind: MessageKind,
    text: str,
    tool: str | None = None,
) -> Message:
    meta = record.get("isMeta") is True or (
        kind is MessageKind.TEXT and text[:256].lstrip().startswith(_META_PREFIXES)
    )
    return Message(
        0,
        line_no,
        role,
        kind,
        text,
        text_of(record.get("timestamp")) or None,
        text_of(record.get("sessionId")) or None,
        tool,
        record.get("isSidechain") is True,
        meta,
    )


_TOOL_USES = frozenset({"tool_use", "server_tool_use"})
_SKIPPABLE = {
    "tool_use": MessageKind.TOOL_USE,
    "server_tool_use": MessageKind.TOOL_USE,
    "tool_result": MessageKind.TOOL_RESULT,
}
_THINKING = frozenset({"thinking", "redacted_thinking"})
_ONE_PROSE = frozenset({"text", *_THINKING})
"""Single-block records read without the general walk of :func:`_messages`."""
_CHAT = frozenset({"user", "assistant"})


def _messages(
    record: dict[str, Any],
    kind: str,
    line_no: int,
    skip: frozenset[MessageKind],
    tools: ToolSink | None = None,
    index: int = 0,
) -> list[Message | None]:
    """The messages of one record (usually one), ``None`` standing for a skipped one."""
    if kind == "summary":
        text = text_of(record.get("summary"))
        return [_make(record, line_no, "system", MessageKind.SUMMARY, text)] if text else []
    if kind == "system":
        text = text_of(record.get("content"))
        return [_make(record, line_no, "system", MessageKind.SYSTEM, text)] if text else []
    message = record.get("message")
    if message.__class__ is not dict:
        return []
    role = text_of(message.get("role")) or kind
    content = message.get("content")
    if record.get("isCompactSummary") is True:
        text = _joined_text(content)
        return [_make(record, line_no, role, MessageKind.COMPACTION, text)] if text else []
    if content.__class__ is str:
        return [_make(record, line_no, role, MessageKind.TEXT, content)] if content.strip() else []
    if content.__class__ is not list:
        return []
    out: list[Message | None] = []
    for block in content:
        if block.__class__ is not dict:
            continue
        btype = block.get("type")
        if btype == "text":
            text = text_of(block.get("text"))
            if text.strip():
                out.append(_make(record, line_no, role, MessageKind.TEXT, text))
        elif btype in _TOOL_USES:
            if MessageKind.TOOL_USE in skip and tools is not None:
                _notify(tools, record, block, MessageKind.TOOL_USE, index + len(out), line_no)
            out.append(
                None
                if MessageKind.TOOL_USE in skip
                else _make(
                    record,
                    line_no,
                    role,
                    MessageKind.TOOL_USE,
                    clip(compact(block.get("input"))),
                    text_of(block.get("name")) or None,
                )
            )
        elif btype == "tool_result" or (btype.__class__ is str and btype.endswith("_tool_result")):
            if MessageKind.TOOL_RESULT in skip:
                if tools is not None:
                    _notify(
                        tools, record, block, MessageKind.TOOL_RESULT, index + len(out), line_no
                    )
                out.append(None)
                continue
            result = _make(
                record,
                line_no,
                role,
                MessageKind.TOOL_RESULT,
                clip_result(_joined_text(block.get("content"))),
            )
            result.is_error = block.get("is_error") is True or reports_failure(result.text)
            out.append(result)
        elif btype in _THINKING:
            text = text_of(block.get("thinking"))
            if text.strip():
                out.append(
                    None
                    if MessageKind.THINKING in skip
                    else _make(record, line_no, role, MessageKind.THINKING, text)
                )
    return out


def _joined_text(content: Any) -> str:
    """Text of a string or of a list of ``text`` blocks (tool results and summaries)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            text_of(b.get("text"))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p)
    return ""


FORMAT = TranscriptFormat.CLAUDE_CODE


def _str(value: Any) -> str | None:
    return value if value.__class__ is str else None
