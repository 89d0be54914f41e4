"""A command that sat waiting for an answer, stopped and run again with the answer given.

An agent's commands get no input from a terminal: a command that asks ("Proceed with shutdown?
[y/N]", an installer's "Select skills to install") waits until it times out. Claude Code then
moves it to the background ("Command running in background with ID: b563cc0"); the agent reads
its output, stops the task (``TaskStop``, formerly ``KillShell``/``KillBash``) and runs the same
command again with the answer given up front (``--yes``, ``echo y | …``). The command never
fails with an error, so the failure miner sees nothing; this watch keeps the pair: the next
session gives the answer in the first call instead of waiting for a prompt no one answers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from swarmq.forge._calls import CD_PREFIX, as_text, call_texts, normal

BACKGROUND = "Command running in background with ID: "
"""How Claude Code answers a command it moved to the background (its id follows)."""
_ID = re.compile(r"[A-Za-z0-9_-]+")
STOPPERS = frozenset({"TaskStop", "KillShell", "KillBash"})
"""Claude Code's tools that stop a background task (the later name first)."""
READERS = frozenset({"TaskOutput", "BashOutput", "Read"})
"""Tools that show a background task's output so far (``Read`` of its output file)."""
_ANSWERED = re.compile(
    r"(?:^|\s)(?:--yes|-y|--assume-yes|--non-interactive|--no-input|--no-prompt|--noconfirm)"
    r"(?=\s|$)|\b(?:echo|printf)\s+['\"]?y(?:es)?(?:\\n)?['\"]?\s*\||(?:^|[;&|]\s*)yes\s*\|",
    re.IGNORECASE,
)
"""A call that gives a prompt its answer up front: a flag that says yes, or ``y`` piped in."""
_PROMPT = re.compile(
    r"\[y/n\]|\(y/n\)|\[yes/no\]|\(yes/no\)|\?\s*$|^\s*(?:[◆◇●○◯◻■□❯›>]|\[[ x]\])\s",
    re.IGNORECASE | re.MULTILINE,
)
"""A line that asks: a yes/no question, a question mark at its end, a selection list's marker."""
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)")
"""The line number ``Read`` puts before each line of a file it shows."""
PATIENCE = 3
"""How many calls after the stop may still be the command run again with its answer."""
PROMPT_CHARS = 120
"""The longest prompt line quoted in the lesson."""


def _task_id(raw: Any) -> str:
    """The task a stop or output call names (``task_id``, ``shell_id``, ``bash_id``)."""
    try:
        value = raw if isinstance(raw, dict) else json.loads(as_text(raw))
    except ValueError:
        return ""
    if not isinstance(value, dict):
        return ""
    return str(value.get("task_id") or value.get("shell_id") or value.get("bash_id") or "")


def _prompt_line(output: str) -> str:
    """The last line of a task's output that asks something (``""`` when none does)."""
    asks = list(_PROMPT.finditer(output))
    if not asks:
        return ""
    start = output.rfind("\n", 0, asks[-1].start()) + 1
    end = output.find("\n", asks[-1].start())
    line = _NUMBERED.sub("", output[start : end if end >= 0 else len(output)]).strip()
    return line[:PROMPT_CHARS]


def _command_of(call: str) -> str:
    """The words that name what a call runs, up to its first shell operator, without a leading
    ``cd`` (``npx skills add org/skills --global``)."""
    bare = _ANSWERED.sub(" ", CD_PREFIX.sub("", call))
    return normal(_OPERATOR.split(bare, maxsplit=1)[0])


_OPERATOR = re.compile(r"&&|\|\||;|\|")


@dataclass
class _Stopped:
    tool: str
    call: str
    prompt: str
    at_call: int


@dataclass
class Answered:
    """A stopped command and the call that ran it again with its answer."""

    tool: str
    waited: str
    prompt: str
    answered: str


@dataclass
class PromptWatch:
    """Background tasks by id, the one the agent stopped, and the call that answered it."""

    background: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """Task id → (tool, call summary, what its output last asked)."""
    stopped: _Stopped | None = None

    def started(self, tool: str, raw: Any, output: str) -> None:
        """A command moved to the background (``output`` starts with :data:`BACKGROUND`)."""
        found = _ID.match(output, len(BACKGROUND))
        if found is None:
            return
        call, _ = call_texts(raw)
        if call and _ANSWERED.search(call) is None:  # asked and answered already
            self.background[found.group(0)] = (tool, call, "")
        if len(self.background) > 16:
            del self.background[next(iter(self.background))]

    def shown(self, tool: str, raw: Any, output: str) -> None:
        """A look at a background task's output so far: keep what it asks, if anything."""
        if tool == "Read":
            path = as_text(raw)
            task = next((t for t in self.background if t in path), "")
        else:
            task = _task_id(raw)
        if task in self.background:
            asks = _prompt_line(output[-2000:])
            if asks:
                runs, call, _ = self.background[task]
                self.background[task] = (runs, call, asks)

    def stop(self, raw: Any, calls: int) -> None:
        """The agent stopped a task: if it is a command seen going to the background, its
        rerun with an answer is looked for in the next few calls."""
        started = self.background.pop(_task_id(raw), None)
        if started is not None:
            self.stopped = _Stopped(started[0], started[1], started[2], calls)

    def rerun(self, tool: str, call: str, calls: int) -> Answered | None:
        """``call`` (of a command tool) when it runs the stopped command again with the answer
        given up front; else ``None`` (and the stop is forgotten once out of patience)."""
        stopped = self.stopped
        if stopped is None:
            return None
        if calls - stopped.at_call > PATIENCE:
            self.stopped = None
            return None
        if (
            tool != stopped.tool
            or _ANSWERED.search(call) is None
            or not _command_of(stopped.call)
            or not _command_of(call).startswith(_command_of(stopped.call))
        ):
            return None
        self.stopped = None
        return Answered(tool, stopped.call, stopped.prompt, call)
