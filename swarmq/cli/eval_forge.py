"""``swarmq eval forge --labels FILE``: forge's precision and recall on labelled real sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, console, emit_json, fail
from swarmq.eval.forge import SPLITS, ForgeEvaluation, LabelsError, evaluate


def _table(result: ForgeEvaluation) -> Table:
    table = Table(title=f"forge on labelled sessions: {result.split} split")
    for column in ("format", "sessions", "lessons", "tp", "fp", "fn", "precision", "recall", "F1"):
        table.add_column(column, justify="left" if column == "format" else "right")
    sessions: dict[str, int] = {}
    lessons: dict[str, int] = {}
    for s in result.sessions:
        sessions[s.session.format] = sessions.get(s.session.format, 0) + 1
        lessons[s.session.format] = lessons.get(s.session.format, 0) + len(s.session.lessons)
    rows = [*result.by_format().items(), ("overall", result.overall)]
    for name, c in rows:
        n = len(result.sessions) if name == "overall" else sessions[name]
        k = sum(lessons.values()) if name == "overall" else lessons[name]
        table.add_row(name, str(n), str(k), str(c.tp), str(c.fp), str(c.fn), f"{c.precision:.2f}",
                      f"{c.recall:.2f}", f"{c.f1:.2f}", style="bold" if name == "overall" else None)
    return table


def forge(
    labels: Annotated[Path, typer.Option(help="Labels file (e.g. eval/forge/labels.yaml); sessions "
                                         "are read from sessions/ beside it.")],
    split: Annotated[str, typer.Option(help="held-out (the figure that counts), tune or all.")] = "held-out",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every false positive and miss.")] = False,
    as_json: bool = JsonOption,
) -> None:
    """Run forge over labelled real sessions in a scratch workspace; precision, recall, F1."""
    if split not in SPLITS:
        fail(f"unknown split {split!r}; one of {', '.join(SPLITS)}")
    try:
        result = evaluate(labels, split=split)
    except LabelsError as exc:
        fail(str(exc))
    if as_json:
        emit_json(result.as_dict(verbose=verbose))
        return
    console.print(_table(result))
    total = result.as_dict()
    console.print(f"{total['candidates']} candidate(s), {total['redundant']} redundant (a lesson already found)",
                  style="dim")
    if verbose:
        for s in result.sessions:
            for miss in s.misses:
                console.print(f"[yellow]miss[/] {s.session.file.name}: {miss}", highlight=False)
            for fp in s.false_positives:
                console.print(f"[red]false positive[/] {s.session.file.name} ({fp['type']} "
                              f"{fp['confidence']}): {fp['content']}", highlight=False)
