"""Turning a transcript record's loosely typed values into text, the same way for every reader."""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_TEXT_LIMIT = 2000
"""Tool inputs and results are noise to forge; keep only a prefix of them."""

NESTED_TOO_DEEPLY = "<nested too deeply>"
"""What :func:`compact` gives for a value the JSON encoder cannot walk (its recursion guard)."""


def compact(value: Any) -> str:
    """A value as one line: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:  # a value nested too deeply for the encoder: noise to forge
        return NESTED_TOO_DEEPLY
    except (TypeError, ValueError):
        return str(value)


RESULT_TEXT_LIMIT = 4000
"""A tool result keeps a longer prefix than a call: a failure's cause is often printed under a
page of the program's own log (a browser that cannot load ``libgbm.so.1``, under the launch
log), and forge reads it only in a failed call's result."""


def clip(text: str) -> str:
    return text if len(text) <= TOOL_TEXT_LIMIT else text[:TOOL_TEXT_LIMIT]


def clip_result(text: str) -> str:
    """A tool result's prefix (see ``RESULT_TEXT_LIMIT``)."""
    return text if len(text) <= RESULT_TEXT_LIMIT else text[:RESULT_TEXT_LIMIT]


def text_of(value: Any) -> str:
    """A string field, or ``""`` when the record put something else there."""
    return value if isinstance(value, str) else ""


_EXIT = re.compile(r"(?:exit[_ ]code\"?:?\s*|exited with code\s+)(-?\d+)", re.IGNORECASE)
_FAILED = re.compile(
    r"^\s*(?:<tool_use_error>|error:|execution error|failed in sandbox|exec_command failed|"
    r"failed to parse function arguments|"
    r"apply_patch verification failed|API Error: [45]\d\d|Request failed with status code [45]\d\d)",
    re.IGNORECASE,
)


_HEADED_EXIT = "\nProcess exited with code "
HEADED_LIMIT = 20_000
"""How far into a result headed by its command (``Command: …``) its exit line is looked for."""


def headed_exit(text: str) -> int | None:
    """The exit code of a result that repeats its command first (Codex's ``exec_command``:
    ``Command: /bin/bash -lc "…"``, ``Chunk ID``, ``Wall time``, ``Process exited with code
    127``): a long command pushes the exit line past where other formats put it. ``None`` when
    the result has no such header or line."""
    if not text.startswith("Command: "):
        return None
    at = text.find(_HEADED_EXIT, 0, HEADED_LIMIT)
    if at < 0:
        return None
    digits = text[at + len(_HEADED_EXIT) : at + len(_HEADED_EXIT) + 6].split("\n", 1)[0].strip()
    return int(digits) if digits.lstrip("-").isdigit() else None


def reports_failure(text: str) -> bool:
    """Whether a tool result's text says the call failed: a non-zero exit code in its first
    lines (``Exit code 1``, ``"exit_code":127``, ``Process exited with code 2``, also after a
    long ``Command:`` header) or an error opening (``<tool_use_error>``, ``execution error``,
    ``error: invalid hunk``)."""
    headed = headed_exit(text)
    if headed is not None:
        return headed != 0
    end = len(text)
    match = (_EXIT.search(text, 0, 400) if text.find("xit", 0, 400) >= 0 else None) or (
        _EXIT.search(text, max(0, end - 200))
        if text.find("exit_code", max(0, end - 200)) >= 0
        else None
    )
    if match is not None:  # Codex puts its metadata last, the others first
        return match.group(1) != "0"
    return _FAILED.match(text, 0, 400) is not None
