"""The hook events of Claude Code and Codex, what swarmq does at each, and the reply formats.

Both agents run a hook command with one JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and the event's own fields; Codex adds
``turn_id``) and read context for the model from stdout as
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``
(https://code.claude.com/docs/en/hooks, https://developers.openai.com/codex/hooks; Codex's
schemas in ``codex-rs/hooks/schema/generated/``). Exit status 0 with empty stdout adds nothing.

Claude Code reports a failing tool call as ``PostToolUseFailure`` (``error``, ``is_interrupt``);
Codex has no such event, so its ``PostToolUse`` is inspected and only a failing result (a
non-zero exit code in ``tool_response``) is looked up. Standard library only: every hook call
imports this, so neither ``typing`` nor ``json`` (:mod:`swarmq.hooks._leanjson`, which writes and
reads as ``json`` does), and ``re`` only for a Codex result given as text.
"""

from __future__ import annotations

from swarmq.hooks._leanjson import dumps, loads

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    import re
    from typing import Any, Literal

    Agent = Literal["claude-code", "codex"]
    Action = Literal["session-start", "prompt", "failure", "forge"]
else:
    Agent = Action = str  # the type checker's names; importable at run time

AGENTS: tuple[Agent, ...] = ("claude-code", "codex")

EVENTS: dict[Agent, dict[str, Action]] = {
    "claude-code": {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "PostToolUseFailure": "failure",
        "Stop": "forge",
        "SubagentStop": "forge",
        "PreCompact": "forge",
        "SessionEnd": "forge",
    },
    "codex": {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "PostToolUse": "failure",
        "Stop": "forge",
        "SubagentStop": "forge",
        "PreCompact": "forge",
    },
}
"""Per agent, the events swarmq installs a hook for and what it does at each."""

MAX_TEXT = 8000
"""Characters of a failing call and its error handed to recall."""
TAIL_TEXT = 3000
"""Of :data:`MAX_TEXT`, the characters kept from the end of a longer text: a shell's error is
near the top, but a traceback, a test run or a build states its failure last."""

EXIT_CODE = r"(?:exit(?:ed)?(?: with)?(?: status| code)?|exit_code|return code)\s*[:=]?\s*(-?\d+)"
"""An exit status stated in a tool's text output (any case)."""
_EXIT: list[re.Pattern[str]] = []


def _exit_code() -> re.Pattern[str]:
    """:data:`EXIT_CODE` compiled, on first use (most hook calls never read a text result)."""
    if not _EXIT:
        import re

        _EXIT.append(re.compile(EXIT_CODE, re.IGNORECASE))
    return _EXIT[0]


class HookCall:
    """One event as an agent reported it (a plain class: ``dataclasses`` costs a hook 5 ms)."""

    __slots__ = ("action", "agent", "event", "payload")

    def __init__(
        self, agent: Agent, event: str, action: Action | None, payload: dict[str, Any]
    ) -> None:
        self.agent, self.event, self.action, self.payload = agent, event, action, payload

    @property
    def session_id(self) -> str:
        value = self.payload.get("session_id")
        return value if isinstance(value, str) else ""

    @property
    def cwd(self) -> str | None:
        value = self.payload.get("cwd")
        return value if isinstance(value, str) and value else None

    def transcripts(self) -> list[str]:
        """The transcript files this event reports (a sub-agent's own one as well)."""
        out = []
        for key in ("transcript_path", "agent_transcript_path"):
            value = self.payload.get(key)
            if isinstance(value, str) and value and value not in out:
                out.append(value)
        return out

    def prompt(self) -> str:
        value = self.payload.get("prompt")
        return value if isinstance(value, str) else ""

    def failure_text(self) -> str | None:
        """The failing call and its error as recall reads them (``$ <call>`` on the first line,
        the error after it), or None when the call did not fail."""
        tool = self.payload.get("tool_name")
        call = _call_text(self.payload.get("tool_input"))
        if self.agent == "claude-code":
            if self.payload.get("is_interrupt"):
                return None  # the user stopped it: not a failure to learn from
            error = _text(self.payload.get("error"))
        else:
            response = self.payload.get("tool_response")
            if not failed(response):
                return None
            error = _text(response)
        if not error and not call:
            return None
        if not call and isinstance(tool, str):
            call = tool
        return clip(f"$ {call}\n{error}".strip())


def clip(text: str, limit: int = MAX_TEXT, tail: int = TAIL_TEXT) -> str:
    """``text`` within ``limit`` characters: its head (the call, a shell's error) and its last
    ``tail`` characters (where a traceback or a test run states the failure)."""
    if len(text) <= limit:
        return text
    return text[: limit - tail - 1] + "\n" + text[-tail:]


def parse(agent: Agent, raw: bytes | str, event: str | None = None) -> HookCall:
    """The call in ``raw`` (the agent's stdin); ``event`` overrides ``hook_event_name``."""
    try:
        value = loads(raw) if raw else {}
    except ValueError:
        value = {}
    payload = value if isinstance(value, dict) else {}
    name = event or payload.get("hook_event_name")
    name = name if isinstance(name, str) else ""
    return HookCall(agent, name, EVENTS[agent].get(name), payload)


def reply(event: str, context: str | None) -> str:
    """What the hook prints: the additional context in the agents' JSON, or nothing."""
    if not context:
        return ""
    return dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def failed(response: object) -> bool:
    """Whether a Codex ``tool_response`` reports a failure (a non-zero exit code, an error)."""
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "status_code"):
            code = response.get(key)
            if isinstance(code, int) and not isinstance(code, bool):
                return code != 0
        if response.get("success") is False or response.get("is_error") is True:
            return True
        if response.get("error"):
            return True
        output = response.get("output") or response.get("stdout") or response.get("content")
        return failed(output) if isinstance(output, str) else False
    if isinstance(response, str):
        stripped = response.lstrip()
        if stripped[:1] == "{":
            try:
                return failed(loads(stripped))
            except ValueError:
                pass
        match = _exit_code().search(response[:2000])
        return match is not None and int(match.group(1)) != 0
    return False


def _call_text(tool_input: object) -> str:
    if isinstance(tool_input, dict):
        for key in ("command", "cmd", "file_path", "path", "url", "pattern"):
            value = tool_input.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value:
                return value
        return dumps(tool_input)[:2000]
    return _text(tool_input)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps(value)
