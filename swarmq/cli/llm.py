"""``swarmq llm usage``: what the LLM ledger says was spent, per day, quota and model."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, load
from swarmq.cli.console import console
from swarmq.llm.ledger import LLMLedger, summarise_usage

app = typer.Typer(help="Language-model providers and their usage ledger.", no_args_is_help=True)


@app.command("usage")
def usage(
    ctx: typer.Context,
    day: Annotated[
        str | None, typer.Option("--day", help="Only this quota day (YYYY-MM-DD).")
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Attempts, quota slots spent, outcomes, tokens and latency from <runtime>/llm-ledger.jsonl."""
    roster = load(ctx)
    ledger = LLMLedger.in_runtime(roster.runtime_dir)
    rows = summarise_usage(ledger.records(), day=day)
    if as_json:
        emit_json([r.as_dict() for r in rows])
        return
    if not rows:
        console.print(f"no LLM calls recorded in {ledger.path}")
        return
    table = Table(title=f"LLM usage ({ledger.path})")
    for column in (
        "day",
        "quota",
        "model",
        "calls",
        "spent",
        "ok",
        "failed",
        "refused",
        "tok in",
        "tok out",
        "ms",
    ):
        table.add_column(
            column,
            justify="left" if column in ("day", "quota", "model") else "right",
            no_wrap=column in ("day", "quota", "model"),
        )
    for r in rows:
        table.add_row(
            r.day,
            r.quota,
            f"{r.provider}/{r.model}",
            str(r.attempts),
            str(r.counted),
            str(r.ok),
            str(r.failed),
            str(r.rejected_replies),
            str(r.tokens_in),
            str(r.tokens_out),
            str(r.mean_latency_ms or "-"),
        )
    console.print(table)
    console.print(
        "calls = attempts, spent = quota slots used, refused = replies refused after arrival"
    )
    for r in rows:
        outcomes = ", ".join(f"{k}={v}" for k, v in r.outcomes.items())
        console.print(f"  {r.day} {r.quota} {r.model}: {outcomes}", highlight=False)
