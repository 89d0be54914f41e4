"""``swarmq curate``: one curator enrichment run (in this process, or on a worker)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks
from swarmq.cli.console import console, say
from swarmq.cli.jobs import cluster_or_none, submit
from swarmq.names import CURATOR_ENRICH
from swarmq.wiring.llm import run_enrichment


def curate(
    ctx: typer.Context,
    ids: Annotated[
        list[str] | None, typer.Option("--id", help="Only these entries (repeatable).")
    ] = None,
    max_batches: Annotated[
        int | None, typer.Option("--max-batches", min=1, help="Calls this run may make.")
    ] = None,
    submit_it: Annotated[
        bool, typer.Option("--submit", help="Run it on a worker (curator queue).")
    ] = False,
    wait: Annotated[
        float, typer.Option("--wait", help="With --submit: seconds to wait (0 = don't).")
    ] = 600,
    as_json: bool = JsonOption,
) -> None:
    """Enrich plain-prose knowledge into actionable directives (enrichment quota)."""
    roster = load(ctx)
    if not roster.curator.enrichment_enabled:
        fail("curator.enrichment_enabled is false in swarm.yaml")
    kwargs: dict[str, Any] = {"entry_ids": ids or None, "max_batches": max_batches}
    if submit_it:
        outcome = submit(roster, CURATOR_ENRICH, kwargs, wait=wait)
        if isinstance(outcome, str):
            console.print(f"submitted curator.enrich [{outcome}]")
            return
        report = outcome
    else:
        cluster = cluster_or_none(roster)
        with console.status("enriching…") as status:
            report = run_enrichment(
                roster,
                store_locks(roster, cluster),
                cluster,
                task_id="cli",
                entry_ids=ids or None,
                max_batches=max_batches,
                progress=status.update,
            )
    if as_json:
        emit_json(report)
    else:
        _print(report)
    if report.get("refused"):
        raise typer.Exit(1)


def _print(report: dict[str, Any]) -> None:
    if report.get("refused"):
        say(("refused:", "red"), " ", str(report["refused"]))
        return
    table = Table(title="curator enrichment", show_header=False)
    table.add_column("what")
    table.add_column("value")
    rows = [
        ("candidates (plain prose)", report["candidates"]),
        ("skipped (unchanged)", report["skipped_unchanged"]),
        ("LLM calls", report["calls"]),
        ("source", ", ".join(report["sources"]) or "-"),
        ("enriched", ", ".join(report["enriched"]) or "-"),
        ("merged after a concurrent write", ", ".join(report["merged_after_conflict"]) or "-"),
        ("not actionable", ", ".join(report["not_actionable"]) or "-"),
        ("stale (changed during the call)", ", ".join(report["stale"]) or "-"),
        ("rejected replies", "; ".join(report["rejected_replies"]) or "-"),
        ("errors", "; ".join(report["errors"]) or "-"),
        ("stopped", report.get("stopped") or "-"),
    ]
    quota = report.get("quota")
    if quota:
        rows.append(("enrichment quota", f"{quota['used']}/{quota['max']} used on {quota['day']}"))
    for what, value in rows:
        table.add_row(what, str(value))
    console.print(table)
    if "deterministic_fallback" in report["sources"]:
        say(
            ("note:", "yellow"),
            " deterministic_fallback entries were enriched by rules, not by a model",
        )
