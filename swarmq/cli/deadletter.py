"""``swarmq deadletter``: messages that kept killing their worker."""

from __future__ import annotations

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, load
from swarmq.cli.console import console, warning
from swarmq.names import DEAD_LETTER_FILE
from swarmq.storage.jsonl import read_jsonl

app = typer.Typer(
    help="Poison messages moved aside after too many deliveries.", no_args_is_help=True
)


@app.command("list")
def list_dead(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Every dead-lettered message recorded in <runtime>/dead-letter.jsonl."""
    roster = load(ctx)
    content = read_jsonl(roster.runtime_dir / DEAD_LETTER_FILE)
    records = [line.value for line in content.lines]
    for bad in content.corrupt:
        warning(bad.describe(content.path))
    if as_json:
        emit_json(records)
        return
    table = Table(title=f"dead letters ({len(records)})")
    for column in ("at", "task", "task id", "deliveries", "queue", "worker"):
        table.add_column(column)
    for r in records:
        table.add_row(
            str(r.get("at")),
            str(r.get("task")),
            str(r.get("task_id")),
            str(r.get("deliveries")),
            str(r.get("queue")),
            str(r.get("worker")),
        )
    console.print(table)
