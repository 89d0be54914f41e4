"""The command line's one console: data is printed as text, never read as Rich markup."""

from __future__ import annotations

import ast
import io
import re

from rich.table import Table

from swarmq.cli.console import PlainConsole, cell, line
from tests.support import REPO

DATA = "[/NoWorkingDir] [bold]b[/bold] [link=https://x.test]l[/link] :smile: [red]r[/] 127.0.0.1"


def render(*objects: object, **kwargs: object) -> str:
    out = io.StringIO()
    PlainConsole(file=out, width=400, color_system=None).print(*objects, **kwargs)
    return out.getvalue()


def test_text_tables_and_styled_lines_print_data_exactly() -> None:
    assert render(DATA).strip() == DATA
    assert render(DATA, markup=True).strip() == DATA  # no caller can turn markup back on
    table = Table(title=DATA)
    table.add_column("lesson")
    table.add_row(DATA)
    table.add_row(cell(DATA, "red"))
    drawn = render(table)
    assert drawn.count(DATA) == 3
    assert render(line(("note:", "yellow"), " ", DATA)).strip() == f"note: {DATA}"


MARKUP_TAG = re.compile(r"""["'][^"'\n]*\[/?(bold|dim|red|green|yellow|cyan|italic)\]""")


def test_no_command_writes_markup_into_its_strings() -> None:
    """Styles are set by code (``say``, ``cell``, ``style=``): a markup tag in a string would
    print literally on the plain console, or, on a markup console, mangle the data beside it."""
    found = [
        f"{path.name}:{number}: {text.strip()}"
        for path in sorted((REPO / "swarmq" / "cli").glob("*.py"))
        for number, text in enumerate(path.read_text("utf-8").splitlines(), 1)
        if MARKUP_TAG.search(text)
    ]
    assert not found, "\n".join(found)
    importers = [
        path.name
        for path in (REPO / "swarmq").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ImportFrom)
        and node.module == "swarmq.cli.common"
        and {alias.name for alias in node.names} & {"console", "err_console"}
    ]
    assert not importers, f"print through swarmq.cli.console, not common's: {importers}"
