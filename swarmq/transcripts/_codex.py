"""Codex CLI transcripts: rollout JSONL (both generations) and ``~/.codex/history.jsonl``.

Current rollouts wrap every line as ``{"timestamp", "type", "payload"}`` with ``session_meta``,
``turn_context``, ``response_item`` (messages, reasoning, tool calls and outputs), ``event_msg``
(UI events, some mirroring response items) and ``compacted`` (compaction summaries). Older
rollouts start with a bare ``{"id", "timestamp", "instructions", "git"}`` line, interleave
``{"record_type": "state"}`` markers and write response items without the envelope.

``event_msg`` user/agent messages repeat a neighbouring ``response_item`` message; whichever
comes first is kept and its twin skipped, so a message is never mined twice.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarmq.transcripts._lines import DEFAULT_MAX_LINE_BYTES, iter_json_records
from swarmq.transcripts.model import Message, MessageKind, ReadReport, ToolSink
from swarmq.transcripts.values import clip, clip_result, compact, reports_failure, text_of

ENVELOPE_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
        "ghost_snapshot",
        "compaction",
    }
)
TOOL_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)
TOOL_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
MIRRORED_EVENTS = {"user_message": "user", "agent_message": "assistant"}
_META_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<permissions",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
)


class _Emitter:
    """Numbers messages and drops an ``event_msg`` / ``response_item`` twin of a recent one."""

    def __init__(
        self, report: ReadReport, skip: frozenset[MessageKind], tools: ToolSink | None = None
    ) -> None:
        self.report = report
        self.skip = skip
        self.tools = tools
        self.index = 0
        self.recent: deque[tuple[str, str, bytes]] = deque(maxlen=16)

    def twin(self, source: str, role: str, text: str) -> bool:
        digest = hashlib.blake2b(text.strip().encode("utf-8", "replace"), digest_size=8).digest()
        for seen_source, seen_role, seen_digest in self.recent:
            if seen_source != source and seen_role == role and seen_digest == digest:
                self.recent.remove((seen_source, seen_role, seen_digest))
                return True
        self.recent.append((source, role, digest))
        return False

    def skipped(self, kind: MessageKind) -> bool:
        """Count a message of a skipped kind without building it."""
        if kind in self.skip:
            self.index += 1
            return True
        return False

    def emit(self, message: Message) -> Message:
        message.index = self.index
        self.index += 1
        if message.session_id is None:
            message.session_id = self.report.session_id
        return message


def read_codex_rollout(
    path: Path,
    report: ReadReport,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    skip: frozenset[MessageKind] = frozenset(),
    tools: ToolSink | None = None,
) -> Iterator[Message]:
    """Yield the messages of a Codex rollout file, either generation (``skip`` and ``tools`` as
    for Claude)."""
    out = _Emitter(report, skip, tools)
    for line_no, record in iter_json_records(path, report, max_line_bytes=max_line_bytes):
        rtype = record.get("type")
        if "payload" in record and isinstance(rtype, str):
            timestamp = text_of(record.get("timestamp")) or None
            payload = record.get("payload")
            if not isinstance(payload, dict):
                report.problem(line_no, f"{rtype} record without an object payload")
                continue
            yield from _envelope(out, rtype, payload, line_no, timestamp)
        elif record.get("record_type") == "state":
            report.record("state")
        elif rtype is None and "id" in record and "timestamp" in record:
            report.record("session_meta")  # the bare first line of an older rollout
            _session(report, record.get("id"))
        elif isinstance(rtype, str) and rtype in ITEM_TYPES:
            report.record(rtype)
            yield from _item(out, rtype, record, line_no, text_of(record.get("timestamp")) or None)
        else:
            report.record(rtype if isinstance(rtype, str) else "<no type>", known=False)
    report.messages = out.index


def _envelope(
    out: _Emitter, rtype: str, payload: dict[str, Any], line_no: int, timestamp: str | None
) -> Iterator[Message]:
    report = out.report
    if rtype not in ENVELOPE_TYPES:
        report.record(rtype, known=False)
        return
    report.record(rtype)
    if rtype == "session_meta":
        _session(report, payload.get("id") or payload.get("session_id"))
    elif rtype == "response_item":
        itype = text_of(payload.get("type"))
        if itype not in ITEM_TYPES:
            report.record(f"response_item:{itype or '?'}", known=False)
            return
        yield from _item(out, itype, payload, line_no, timestamp)
    elif rtype == "event_msg":
        etype = text_of(payload.get("type"))
        role = MIRRORED_EVENTS.get(etype)
        text = text_of(payload.get("message"))
        if role and text.strip() and not out.twin("event", role, text):
            yield out.emit(
                Message(
                    0,
                    line_no,
                    role,
                    MessageKind.TEXT,
                    text,
                    timestamp,
                    is_meta=text[:256].lstrip().startswith(_META_PREFIXES),
                )
            )
    elif rtype == "compacted":
        text = text_of(payload.get("message"))
        if text.strip():
            yield out.emit(Message(0, line_no, "system", MessageKind.COMPACTION, text, timestamp))


def _item(
    out: _Emitter, itype: str, item: dict[str, Any], line_no: int, timestamp: str | None
) -> Iterator[Message]:
    if itype == "message":
        role = text_of(item.get("role")) or "unknown"
        text = _content_text(item.get("content"))
        if not text.strip():
            return
        meta = role in ("developer", "system") or text[:256].lstrip().startswith(_META_PREFIXES)
        if role in ("user", "assistant") and out.twin("item", role, text):
            return
        yield out.emit(Message(0, line_no, role, MessageKind.TEXT, text, timestamp, is_meta=meta))
    elif itype == "reasoning":
        if out.skipped(MessageKind.THINKING):
            return
        summary = item.get("summary")
        text = _content_text(summary) if isinstance(summary, list) else ""
        if text.strip():
            yield out.emit(Message(0, line_no, "assistant", MessageKind.THINKING, text, timestamp))
    elif itype in TOOL_CALLS:
        name = text_of(item.get("name")) or itype
        args = item.get("arguments", item.get("input", item.get("action")))
        if out.skipped(MessageKind.TOOL_USE):
            if out.tools is not None:
                out.tools.call(name, args, _call_id(item))
            return
        yield out.emit(
            Message(
                0,
                line_no,
                "assistant",
                MessageKind.TOOL_USE,
                clip(compact(args)),
                timestamp,
                tool_name=name,
            )
        )
    elif itype in TOOL_OUTPUTS:
        skipped = out.skipped(MessageKind.TOOL_RESULT)
        if skipped and out.tools is None:
            return
        output = item.get("output")
        text = clip_result(_content_text(output) if isinstance(output, list) else compact(output))
        failed = reports_failure(text)
        if skipped and out.tools is not None:
            out.tools.result(text, failed, out.index - 1, line_no, timestamp, _call_id(item))
            return
        yield out.emit(
            Message(0, line_no, "tool", MessageKind.TOOL_RESULT, text, timestamp, is_error=failed)
        )
    elif itype == "compaction":
        text = text_of(item.get("summary")) or text_of(item.get("message"))
        if text.strip():
            yield out.emit(Message(0, line_no, "system", MessageKind.COMPACTION, text, timestamp))


def read_codex_history(
    path: Path,
    report: ReadReport,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    skip: frozenset[MessageKind] = frozenset(),
) -> Iterator[Message]:
    """Yield the prompts of ``history.jsonl`` (``{"session_id", "ts", "text"}`` per line)."""
    index = 0
    for line_no, record in iter_json_records(path, report, max_line_bytes=max_line_bytes):
        text = record.get("text")
        if not isinstance(text, str):
            report.record("<no text>", known=False)
            continue
        report.record("history")
        session = text_of(record.get("session_id")) or None
        if session and report.session_id is None:
            report.session_id = session
        if not text.strip():
            continue
        yield Message(
            index, line_no, "user", MessageKind.TEXT, text, _epoch(record.get("ts")), session
        )
        index += 1
    report.messages = index


def _session(report: ReadReport, value: Any) -> None:
    if isinstance(value, str) and value and report.session_id is None:
        report.session_id = value


def _content_text(content: Any) -> str:
    """Text of Responses-API content: ``input_text`` / ``output_text`` / ``summary_text`` blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [text_of(b.get("text")) for b in content if isinstance(b, dict)]
    return "\n".join(p for p in parts if p)


def _epoch(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        stamp = datetime.fromtimestamp(float(value), UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


def _call_id(item: dict[str, Any]) -> str | None:
    value = item.get("call_id")
    return value if isinstance(value, str) else None
