"""Turning a transcript record's loosely typed values into text, the same way for every reader."""

from __future__ import annotations

import json
from typing import Any

TOOL_TEXT_LIMIT = 2000
"""Tool inputs and results are noise to forge; keep only a prefix of them."""


def compact(value: Any) -> str:
    """A value as one line: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


def clip(text: str) -> str:
    return text if len(text) <= TOOL_TEXT_LIMIT else text[:TOOL_TEXT_LIMIT]


def text_of(value: Any) -> str:
    """A string field, or ``""`` when the record put something else there."""
    return value if isinstance(value, str) else ""
