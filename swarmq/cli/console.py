"""The one way the command line prints: everything is plain text, styles are chosen by code.

Lessons, transcripts, mission objectives and agent replies are full of brackets (``[/NoWorkingDir]``,
``[bold]``, ``[link=x]``) and colons (``:smile:``); read as Rich markup, one such lesson in a store
stops ``knowledge list`` with a ``MarkupError``, or silently restyles or drops part of it. So the
consoles here never parse markup, emoji codes or "highlight" patterns in anything they print, a
table's cells and titles included: a string is printed exactly as it is. Where code wants colour
it says so with a style (``say(("ok", "green"), " ", data)``, ``cell(text, "red")``), never by
writing markup into a string that might also hold data.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.text import Text

PIPED_WIDTH = 10_000
"""Output that is not a terminal is as wide as its content: nothing is folded into a pipe."""

Part = str | tuple[str, str]
"""A piece of a line: plain text, or ``(text, style)``."""


class PlainConsole(Console):
    """A Rich console that never reads markup, emoji codes or highlights out of what it prints,
    and whose tables never cut a cell: a long id or path wraps (``fold``) instead of ending in
    "…"."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        kwargs["markup"] = False  # a caller cannot turn it back on: no data is ever markup
        kwargs.setdefault("highlight", False)
        kwargs.setdefault("emoji", False)
        tables = sys.modules.get("rich.table")  # none built when none imported: no import here
        for obj in objects:
            if tables is not None and isinstance(obj, tables.Table):
                for column in obj.columns:
                    if column.overflow == "ellipsis":
                        column.overflow = "fold"
        super().print(*objects, **kwargs)


console = PlainConsole(width=None if sys.stdout.isatty() else PIPED_WIDTH)
"""Standard output: tables, listings, results."""
err_console = PlainConsole(stderr=True)
"""Standard error: notices, warnings, progress."""


def line(*parts: Part) -> Text:
    """One line from plain pieces and ``(text, style)`` pairs; no piece is read as markup."""
    return Text.assemble(*parts)


def cell(text: object, style: str = "") -> Text:
    """A table cell (or any text) in ``style``, its content plain."""
    return Text(str(text), style=style)


def say(*parts: Part, stderr: bool = False) -> None:
    """Print one line of plain pieces and ``(text, style)`` pairs (on stderr with ``stderr``);
    a long line wraps in a terminal and is never cut."""
    (err_console if stderr else console).print(line(*parts), soft_wrap=True)


def notice(message: str) -> None:
    """``notice: message`` on stderr: something the user should know, nothing went wrong."""
    say(("notice:", "yellow"), " ", message, stderr=True)


def warning(message: str) -> None:
    """``warning: message`` on stderr: something went wrong, the command goes on."""
    say(("warning:", "yellow"), " ", message, stderr=True)
