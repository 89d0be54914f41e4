"""``swarmq quota``: the cluster-wide daily LLM quotas."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, load
from swarmq.cli.console import console, line
from swarmq.coord.cluster import Cluster

app = typer.Typer(help="Daily LLM-call quotas shared by every worker.", no_args_is_help=True)


@app.command("status")
def quota_status(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Name, window, used, held, max and when each quota resets."""
    roster = load(ctx)
    cluster = Cluster.connect(roster.cluster_config(), timeout=2.0)
    rows = cluster.gate.statuses()
    if as_json:
        emit_json([r.as_dict() for r in rows])
        return
    console.print(quota_table(roster.swarm, [r.as_dict() for r in rows]))


def quota_table(swarm: str, rows: list[dict[str, Any]]) -> Table:
    """Each quota with a bar: red for calls used, yellow for slots held, grey for what is left."""
    table = Table(title=f"quotas of swarm {swarm}")
    for column in ("quota", "window", "day", "used", "held", "max", "use", "resets at"):
        table.add_column(column, justify="right" if column in ("used", "held", "max") else "left")
    for r in rows:
        width, top, used, held = 20, int(r["max"]), int(r["used"]), int(r["held"])
        filled = 0 if top == 0 else min(width, round(width * (used + held) / top))
        used_cells = 0 if top == 0 else min(filled, round(width * used / top))
        bar = line(
            ("█" * used_cells, "red"),
            ("█" * (filled - used_cells), "yellow"),
            "░" * (width - filled),
        )
        zone = r["window"] if r["window"] == "utc" else f"local ({r['timezone']})"
        table.add_row(
            r["name"], zone, r["day"], str(used), str(held), str(top), bar, str(r["resets_at"])
        )
    return table
