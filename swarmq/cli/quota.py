"""``swarmq quota``: the cluster-wide daily LLM quotas."""

from __future__ import annotations

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, console, emit_json, fail, load
from swarmq.coord.cluster import Cluster
from swarmq.coord.connection import RedisUnavailable
from swarmq.coord.quota import QuotaUnavailable

app = typer.Typer(help="Daily LLM-call quotas shared by every worker.", no_args_is_help=True)


@app.command("status")
def quota_status(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Name, window, used, held, max and when each quota resets."""
    roster = load(ctx)
    try:
        cluster = Cluster.connect(roster, timeout=2.0)
        rows = cluster.gate.statuses()
    except (RedisUnavailable, QuotaUnavailable) as exc:
        fail(str(exc))
    if as_json:
        emit_json([r.as_dict() for r in rows])
        return
    table = Table(title=f"quotas of swarm {roster.swarm}")
    for column in ("quota", "window", "day", "used", "held", "max", "use", "resets at"):
        table.add_column(column, justify="right" if column in ("used", "held", "max") else "left")
    for r in rows:
        width = 20
        filled = 0 if r.max == 0 else min(width, round(width * (r.used + r.held) / r.max))
        used_cells = 0 if r.max == 0 else min(filled, round(width * r.used / r.max))
        bar = (
            "[red]"
            + "█" * used_cells
            + "[/][yellow]"
            + "█" * (filled - used_cells)
            + "[/]"
            + "░" * (width - filled)
        )
        zone = r.window_kind if r.window_kind == "utc" else f"local ({r.timezone})"
        table.add_row(
            r.name,
            zone,
            r.window,
            str(r.used),
            str(r.held),
            str(r.max),
            bar,
            r.resets_at.strftime("%Y-%m-%d %H:%M UTC"),
        )
    console.print(table)
