"""``swarmq eval consolidate|inject|inject-every-store --labels FILE``: knowledge judgement on
labelled real stores and workspaces.

Prints the bars' figures for one split (``held`` by default: the items never tuned on), with
``--verbose`` every miss (consolidation) or every query's injected entries (injection).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail
from swarmq.cli.console import console, say
from swarmq.eval.cross_store import evaluate_cross_store_modes, load_cross_store_labels
from swarmq.eval.knowledge import (
    SPLITS,
    Labels,
    evaluate_consolidation,
    evaluate_retrieval_modes,
    load_labels,
)
from swarmq.eval.metrics import HitRate
from swarmq.knowledge.config import DenseModel, KnowledgeConfig

LabelsOption = Annotated[
    Path, typer.Option("--labels", help="Labels JSON (eval/knowledge/labels.json).")
]
SplitOption = Annotated[str, typer.Option("--split", help="held (never tuned on), tune, or all.")]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show every miss / every query.")
]


def _labels(path: Path, split: str) -> Labels:
    if split not in SPLITS:
        fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    return load_labels(path)


def consolidate(
    labels: LabelsOption,
    split: SplitOption = "held",
    verbose: VerboseOption = False,
    as_json: bool = JsonOption,
) -> None:
    """Duplicate pairs merged and must-stay-apart pairs kept apart, by kind."""
    figures = evaluate_consolidation(_labels(labels, split), split)
    data: dict[str, Any] = figures.as_dict()
    if not verbose:
        data.pop("misses")
    if as_json:
        emit_json(data)
        return
    table = Table(title=f"consolidation ({split})")
    for column in ("label", "kind", "ok", "total", "rate"):
        table.add_column(column)
    for kind, counts in sorted(figures.duplicates.items()):
        table.add_row(
            "duplicate merged",
            kind,
            str(counts.tp),
            str(counts.tp + counts.fn),
            f"{counts.recall:.3f}",
        )
    for kind, rate in sorted(figures.apart.items()):
        table.add_row("apart kept apart", kind, str(rate.hits), str(rate.total), f"{rate.rate:.3f}")
    console.print(table)
    console.print(
        f"duplicate recall {figures.recall:.3f}; apart pairs merged or superseded: "
        f"{figures.violations}; actions {figures.actions}"
    )
    for miss in figures.misses if verbose else ():
        action = f" {miss['action']}" if miss.get("action") else ""
        say(
            (f"{miss['label']} {miss['kind']}", "yellow"),
            f": {miss['a'][:100]!r} / {miss['b'][:100]!r}{action}",
        )


def inject(
    labels: LabelsOption,
    split: SplitOption = "held",
    verbose: VerboseOption = False,
    dense_model: Annotated[
        DenseModel | None,
        typer.Option("--dense-model", help="Hybrid on this packaged model (default: settings')."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """A relevant entry in the top 3, and nothing injected when nothing is relevant: the default
    (hybrid) retrieval beside the lexical one."""
    modes = evaluate_retrieval_modes(_labels(labels, split), split, dense_model)
    figures, lexical = modes["hybrid"], modes["lexical"]
    model = KnowledgeConfig(dense_model=dense_model or DenseModel.AUTO).model.value
    if as_json:
        emit_json(
            {
                **figures.as_dict(verbose),
                "retrieval": "hybrid",
                "dense_model": model,
                "lexical": lexical.as_dict(),
            }
        )
        return
    table = Table(title=f"injection ({split}; hybrid on {model})")
    for column in ("figure", "hits", "total", "hybrid (default)", "lexical"):
        table.add_column(column)
    for name, mine, other in (
        ("relevant entry in top 3", figures.top3, lexical.top3),
        ("nothing injected when none relevant", figures.abstain, lexical.abstain),
    ):
        table.add_row(
            name, str(mine.hits), str(mine.total), f"{mine.rate:.3f}", f"{other.rate:.3f}"
        )
    console.print(table)
    for detail in figures.details if verbose else ():
        mark = ("ok", "green") if detail["ok"] else ("miss", "red")
        say(mark, f" {detail['query']!r} ({detail['relevant']} relevant)")
        for shown in detail["shown"]:
            star = "*" if shown["relevant"] else " "
            say(f"   {star} {shown['score']:.3f} {shown['id']} {shown['lesson']}")


def inject_every_store(
    labels: LabelsOption,
    split: SplitOption = "held",
    verbose: VerboseOption = False,
    dense_model: Annotated[
        DenseModel | None,
        typer.Option("--dense-model", help="Hybrid on this packaged model (default: settings')."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """The federated injection over real workspaces holding several stores
    (eval/knowledge/workspaces/queries.json): a relevant record in the top 3 and silence when
    nothing is relevant, per store kind and per workspace, hybrid (default) beside lexical."""
    if split not in SPLITS:
        fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    modes = evaluate_cross_store_modes(load_cross_store_labels(labels), split, dense_model)
    figures, lexical = modes["hybrid"], modes["lexical"]
    if as_json:
        emit_json({**figures.as_dict(verbose), "lexical": lexical.as_dict()})
        return
    table = Table(title=f"injection from every store ({split})")
    for column in ("figure", "hits", "total", "hybrid (default)", "lexical"):
        table.add_column(column)
    rows = [
        ("relevant record in top 3", figures.top3, lexical.top3),
        ("nothing injected when none relevant", figures.abstain, lexical.abstain),
    ]
    for kind, rate in sorted(figures.by_kind.items()):
        rows.append((f"  top 3, {kind} records", rate, lexical.by_kind.get(kind, HitRate())))
    for name, table_of in sorted(figures.by_workspace.items()):
        for figure, rate in sorted(table_of.items()):
            other = lexical.by_workspace.get(name, {}).get(figure, HitRate())
            rows.append((f"  {name}: {figure}", rate, other))
    for name, mine, other in rows:
        table.add_row(
            name, str(mine.hits), str(mine.total), f"{mine.rate:.3f}", f"{other.rate:.3f}"
        )
    console.print(table)
    for detail in figures.details if verbose else ():
        mark = ("ok", "green") if detail["ok"] else ("miss", "red")
        say(mark, f" [{detail['workspace']}] {detail['query']!r} ({detail['relevant']} relevant)")
        for shown in detail["shown"]:
            star = "*" if shown["relevant"] else " "
            say(f"   {star} {shown['store']} {shown['score']:.4f} {shown['label']} {shown['text']}")
