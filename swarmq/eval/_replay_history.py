"""One recorded session as the replay needs it: when it started and ended, the user's first
request, and every failing tool call with the call itself and its error.

The transcript reader decides what a failing tool result is (``Message.is_error``: an error flag,
a non-zero exit code, a refused call), exactly as forge sees it. The reader does not keep which
call a result answers, so the calls are paired from the raw records by their ids (Claude Code
``tool_use.id`` / ``tool_result.tool_use_id``, Codex ``call_id``); a Codex ``write_stdin`` poll
is shown as the command that started the polled process.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.storage.clock import try_parse_iso
from swarmq.transcripts.model import MessageKind
from swarmq.transcripts.reader import open_transcript

CALL_CHARS = 600
"""How much of a call's input the failure text carries (a hook sees the whole call; the
signature of a failure is in its first words)."""
ERROR_CHARS = 1500
"""How much of the head of the error the failure text carries."""
ERROR_TAIL_CHARS = 1000
"""How much of the end of a longer error it carries too: the hooks hand recall a long output's
head and its tail (``swarmq.hooks.events.clip``), because a traceback, a test run or a build
states its failure last."""

_NOT_A_REQUEST = (
    "<local-command-caveat>",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# agents.md instructions",
    "<system-reminder>",
)
_PROCESS = re.compile(r"session ID (\d+)")


@dataclass(frozen=True, slots=True)
class FailingCall:
    """A tool call whose result reports failure, as a hook on the failure would see it."""

    line: int
    """1-based line of the failing tool result in the session file."""
    moment: datetime
    tool: str
    call: str
    error: str

    def text(self) -> str:
        """The call and its error as the hooks hand them to recall (``$ <call>`` on the first
        line, the error after it); also the text injection at the failure is given."""
        return f"$ {self.call or self.tool}\n{self.error}".strip()


def _clipped(error: str) -> str:
    if len(error) <= ERROR_CHARS + ERROR_TAIL_CHARS:
        return error
    return error[:ERROR_CHARS] + "\n" + error[-ERROR_TAIL_CHARS:]


@dataclass(slots=True)
class Session:
    """A session file read for replay; ``start``/``end`` are its first and last timestamps."""

    path: Path
    session_id: str
    start: datetime
    end: datetime
    first_request: str
    failures: list[FailingCall] = field(default_factory=list)

    def failure_at(self, line: int) -> FailingCall | None:
        return next((f for f in self.failures if f.line == line), None)


def _payload(record: dict[str, Any]) -> dict[str, Any]:
    payload = record.get("payload")
    if record.get("type") == "response_item" and isinstance(payload, dict):
        return payload
    return record


def _call_text(name: str, value: Any) -> str:
    """The command of a shell call (or the path, URL or pattern of another tool), else the
    call's input as compact JSON: what the hooks put after ``$``."""
    if isinstance(value, str):
        raw: str = value
        try:
            value = json.loads(raw)
        except ValueError:
            return raw[:CALL_CHARS]
    if isinstance(value, dict):
        for key in ("command", "cmd", "file_path", "path", "url", "pattern"):
            command = value.get(key)
            if isinstance(command, list):
                command = " ".join(str(c) for c in command)
            if isinstance(command, str) and command:
                return command[:CALL_CHARS]
    return json.dumps(value, ensure_ascii=False)[:CALL_CHARS]


class _Calls:
    """Tool calls and the ids of the results on each line, from one pass over the raw records."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[str, str]] = {}
        self.results: dict[int, list[str]] = {}
        self.processes: dict[str, str] = {}

    def read(self, path: Path) -> None:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line_no, line in enumerate(handle, 1):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    self._record(line_no, record)

    def _record(self, line_no: int, record: dict[str, Any]) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    name = str(block.get("name") or "tool")
                    self.calls[block["id"]] = (name, _call_text(name, block.get("input")))
                elif block.get("type") == "tool_result" and isinstance(
                    block.get("tool_use_id"), str
                ):
                    self.results.setdefault(line_no, []).append(block["tool_use_id"])
            return
        payload = _payload(record)
        kind = payload.get("type")
        call_id = payload.get("call_id")
        if not isinstance(call_id, str):
            return
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(payload.get("name") or kind)
            value = payload.get("arguments", payload.get("input", payload.get("action")))
            self.calls[call_id] = (name, self._resolve(name, value))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.results.setdefault(line_no, []).append(call_id)
            output = payload.get("output")
            hit = _PROCESS.search(output) if isinstance(output, str) else None
            if hit is not None and call_id in self.calls:
                self.processes[hit.group(1)] = self.calls[call_id][1]

    def _resolve(self, name: str, value: Any) -> str:
        """A ``write_stdin`` poll stands for the command that started the polled process."""
        text = _call_text(name, value)
        if name == "write_stdin" and isinstance(value, str):
            try:
                session = json.loads(value).get("session_id")
            except (ValueError, AttributeError):
                return text
            started = self.processes.get(str(session))
            if started is not None:
                return f"{started} (polled: {text})"[:CALL_CHARS]
        return text

    def call_for(self, line_no: int) -> tuple[str, str]:
        for call_id in self.results.get(line_no, []):
            if call_id in self.calls:
                return self.calls[call_id]
        return ("tool", "")


def _is_request(text: str) -> bool:
    lowered = text.lstrip().lower()
    return bool(lowered) and not lowered.startswith(_NOT_A_REQUEST)


def read_session(path: Path) -> Session:
    """Read ``path`` once through the transcript reader, once raw for the call pairing."""
    transcript = open_transcript(path)
    calls = _Calls()
    calls.read(path)
    first: datetime | None = None
    last: datetime | None = None
    request = ""
    failures: list[FailingCall] = []
    for message in transcript.messages():
        moment = try_parse_iso(message.timestamp)
        if moment is not None:
            first = moment if first is None else min(first, moment)
            last = moment if last is None else max(last, moment)
        if (
            not request
            and message.role == "user"
            and message.kind == MessageKind.TEXT
            and not message.is_meta
            and _is_request(message.text)
        ):
            request = message.text
        if message.kind == MessageKind.TOOL_RESULT and message.is_error:
            name, call = calls.call_for(message.line_no)
            failures.append(
                FailingCall(
                    message.line_no,
                    moment or last or datetime.min,
                    name,
                    call,
                    _clipped(message.text),
                )
            )
    if first is None or last is None:
        raise ValueError(f"{path}: no timestamped message; a session cannot be replayed without")
    failures = [f if f.moment != datetime.min else _at(f, first) for f in failures]
    return Session(path, path.stem, first, last, request, failures)


def _at(failure: FailingCall, moment: datetime) -> FailingCall:
    return FailingCall(failure.line, moment, failure.tool, failure.call, failure.error)
