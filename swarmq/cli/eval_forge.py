"""``swarmq eval forge --labels FILE``: forge's precision and recall on labelled real sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail
from swarmq.cli.console import console, say
from swarmq.eval.forge import SPLITS, ForgeEvaluation, LabelsError, evaluate
from swarmq.eval.forge_repos import RepoChange, Sweep, compare, sweep
from swarmq.eval.metrics import Counts

_FIGURES = ("tp", "fp", "fn", "precision", "recall", "F1")


def _figures(c: Counts) -> list[str]:
    return [str(c.tp), str(c.fp), str(c.fn), f"{c.precision:.2f}", f"{c.recall:.2f}", f"{c.f1:.2f}"]


def _repo_table(result: ForgeEvaluation) -> Table:
    table = Table(title=f"by repository: {result.split} split")
    for column in ("repository", "sessions", *_FIGURES):
        table.add_column(column, justify="left" if column == "repository" else "right")
    for repo, c in result.by_repo().items():
        table.add_row(
            repo, str(sum(1 for s in result.sessions if s.session.repo == repo)), *_figures(c)
        )
    return table


def _sweep_table(result: Sweep) -> Table:
    table = Table(
        title="min_confidence sweep; last row: threshold chosen without each repository, scored on it"
    )
    for column in ("min_confidence", *_FIGURES):
        table.add_column(column, justify="right")
    for threshold, evaluation in result.points:
        table.add_row(f"{threshold:.2f}", *_figures(evaluation.overall))
    chosen = ", ".join(f"{f.repo.split('/')[-1]}={f.chosen:.2f}" for f in result.folds)
    table.add_row("left out", *_figures(result.left_out), style="bold")
    table.caption = f"chosen per left-out repository: {chosen}"
    return table


def _change_table(changes: list[RepoChange]) -> Table:
    table = Table(title="against the baseline, by repository (tp and fp before → after)")
    for column in ("repository", "tp", "fp", "verdict"):
        table.add_column(column, justify="left" if column in ("repository", "verdict") else "right")
    for c in changes:
        table.add_row(
            c.repo, f"{c.before.tp} → {c.after.tp}", f"{c.before.fp} → {c.after.fp}", c.verdict
        )
    return table


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
        table.add_row(
            name,
            str(n),
            str(k),
            str(c.tp),
            str(c.fp),
            str(c.fn),
            f"{c.precision:.2f}",
            f"{c.recall:.2f}",
            f"{c.f1:.2f}",
            style="bold" if name == "overall" else None,
        )
    return table


def forge(
    labels: Annotated[
        Path,
        typer.Option(
            help="Labels file (e.g. eval/forge/labels.yaml); sessions "
            "are read from sessions/ beside it."
        ),
    ],
    split: Annotated[
        str, typer.Option(help="held-out (the figure that counts), tune or all.")
    ] = "held-out",
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every false positive and miss.")
    ] = False,
    by_repo: Annotated[
        bool, typer.Option("--by-repo", help="Figures per source repository.")
    ] = False,
    sweep_thresholds: Annotated[
        bool,
        typer.Option(
            "--sweep",
            help="min_confidence sweep, with the threshold chosen leaving each repository out.",
        ),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(help="A saved --json run: compare with it repository by repository."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Run forge over labelled real sessions in a scratch workspace; precision, recall, F1."""
    if split not in SPLITS:
        fail(f"unknown split {split!r}; one of {', '.join(SPLITS)}")
    result = evaluate(labels, split=split)
    swept = sweep(labels, split=split) if sweep_thresholds else None
    changes = compare(_load(baseline), result) if baseline is not None else None
    if as_json:
        emit_json(
            result.as_dict(verbose=verbose)
            | ({"sweep": swept.as_dict()} if swept else {})
            | ({"changes": {c.repo: c.verdict for c in changes}} if changes is not None else {})
        )
        return
    console.print(_table(result))
    if by_repo:
        console.print(_repo_table(result))
    if swept is not None:
        console.print(_sweep_table(swept))
    if changes is not None:
        console.print(_change_table(changes))
    total = result.as_dict()
    kinds = ", ".join(
        f"{kind} {rate.hits}/{rate.total} ({rate.rate:.2f})"
        for kind, rate in result.recall_by_kind().items()
        if rate.total
    )
    if kinds:
        console.print(f"recall by kind: {kinds}")
    console.print(
        f"{total['candidates']} candidate(s), {total['redundant']} redundant (a lesson already found)",
        style="dim",
    )
    if verbose:
        for s in result.sessions:
            for miss in s.misses:
                say(("miss", "yellow"), f" {s.session.file.name}: {miss}")
            for fp in s.false_positives:
                say(
                    ("false positive", "red"),
                    f" {s.session.file.name} ({fp['type']} {fp['confidence']}): {fp['content']}",
                )


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabelsError(f"{path}: cannot read the baseline run: {exc}") from exc
    if not isinstance(data, dict):
        raise LabelsError(f"{path}: the baseline run is not a JSON object")
    return data
