"""What every transcript reader yields: messages in order, plus a report of what it skipped.

Readers are generators so a 1 GB transcript is read in constant memory; the :class:`ReadReport`
only holds counters and a bounded sample of problems, never the messages themselves.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol


class TranscriptFormat(StrEnum):
    """The transcript formats forge understands (detected automatically)."""

    CLAUDE_CODE = "claude-code"
    """Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``)."""
    CODEX_ROLLOUT = "codex-rollout"
    """Codex CLI rollout JSONL, current envelope form and the older bare form with
    ``{"record_type": "state"}`` lines."""
    CODEX_HISTORY = "codex-history"
    """Codex ``~/.codex/history.jsonl``: one user prompt per line."""
    MARKDOWN = "markdown"
    """Plain Markdown or text (hand-written notes, exported chats)."""


class MessageKind(StrEnum):
    """What a message is, so the classifier can skip tool noise without guessing."""

    TEXT = "text"
    TOOL_USE = "tool_use"
    TOOL_RESULT = "tool_result"
    THINKING = "thinking"
    SUMMARY = "summary"
    """A session summary line (Claude Code ``type: summary``)."""
    COMPACTION = "compaction"
    """A compaction summary: the conversation so far, condensed by the agent."""
    SYSTEM = "system"


MINABLE_KINDS = frozenset({MessageKind.TEXT, MessageKind.SUMMARY, MessageKind.COMPACTION})
"""Kinds whose text can hold a decision or lesson; tool traffic and reasoning are noise."""


@dataclass(slots=True)
class Message:
    """One message of a transcript, with where it came from (its source span)."""

    index: int
    """0-based position among the messages this reader yielded for the file."""
    line_no: int
    """1-based line of the record (or first line of the paragraph) in the file."""
    role: str
    """``user``, ``assistant``, ``system``, ``developer`` or ``unknown``."""
    kind: MessageKind
    text: str
    timestamp: str | None = None
    session_id: str | None = None
    tool_name: str | None = None
    is_sidechain: bool = False
    """Claude Code sub-agent (Task tool) traffic stored in the parent session file."""
    is_meta: bool = False
    """Injected by the tool itself (``isMeta``, ``<environment_context>``), not said by anyone."""
    is_error: bool = False
    """A tool result that reports failure (an error flag, a non-zero exit code, a refused call)."""


class ToolSink(Protocol):
    """Receives the tool traffic a reader was told to skip, without a :class:`Message` being built
    for it (forge mines failures and retries from it at the cost of a method call)."""

    def call(self, name: str | None, value: Any, call_id: str | None = None) -> None:
        """A tool call: its name, its input as the record holds it (object or string), and the
        id its result will name (Claude Code's ``tool_use`` id, Codex's ``call_id``)."""

    def result(
        self,
        text: str,
        is_error: bool,
        index: int,
        line_no: int,
        timestamp: str | None,
        call_id: str | None = None,
    ) -> None:
        """A tool result: its (clipped) text, whether it reports failure, its place, and the id
        of its call (parallel calls answer out of order; without an id, the oldest call)."""


MAX_PROBLEM_SAMPLES = 20
"""Malformed lines reported individually; the rest are only counted."""


@dataclass(slots=True)
class LineProblem:
    """A line that could not be used, with enough to find it in the file."""

    line_no: int
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line_no, "error": self.error}


@dataclass
class ReadReport:
    """What a reader saw: record counts by type, unknown types, malformed lines."""

    path: Path
    format: TranscriptFormat
    lines: int = 0
    bytes_read: int = 0
    messages: int = 0
    session_id: str | None = None
    record_types: Counter[str] = field(default_factory=Counter)
    unknown_types: Counter[str] = field(default_factory=Counter)
    malformed: int = 0
    problems: list[LineProblem] = field(default_factory=list)
    truncated_last_line: bool = False

    def record(self, kind: str, *, known: bool = True) -> None:
        self.record_types[kind] += 1
        if not known:
            self.unknown_types[kind] += 1

    def problem(self, line_no: int, error: str) -> None:
        self.malformed += 1
        if len(self.problems) < MAX_PROBLEM_SAMPLES:
            self.problems.append(LineProblem(line_no, error))

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "format": self.format.value,
            "session_id": self.session_id,
            "lines": self.lines,
            "bytes": self.bytes_read,
            "messages": self.messages,
            "record_types": dict(self.record_types),
            "unknown_types": dict(self.unknown_types),
            "malformed": self.malformed,
            "problems": [p.as_dict() for p in self.problems],
            "truncated_last_line": self.truncated_last_line,
        }
