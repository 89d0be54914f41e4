"""``swarmq mission submit|list|show|cancel|resume|reap``: the orchestrator's missions from a shell."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, load
from swarmq.cli.console import cell, console, say
from swarmq.client import MissionClient
from swarmq.missions.ledger import Mission
from swarmq.missions.states import MissionState

app = typer.Typer(help="Orchestrator missions dispatched to roster workers.", no_args_is_help=True)

STYLE = {
    "complete": "green",
    "failed": "red",
    "blocked": "yellow",
    "cancelled": "dim",
    "executing": "cyan",
    "planning": "blue",
    "review": "magenta",
}


def _client(ctx: typer.Context) -> MissionClient:
    return MissionClient(load(ctx))


def _run(action: Any) -> Any:
    """Builtin lookup and value errors become one red line and exit status 1, as swarmq's own
    errors do in :func:`swarmq.cli.errors.exit_for` (a KeyError shows its message unquoted)."""
    try:
        return action()
    except (ValueError, LookupError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc))


def _print(mission: Mission, as_json: bool) -> None:
    if as_json:
        emit_json(mission.dump())
        return
    style = STYLE.get(mission.state.value, "white")
    worker = mission.worker_id or "-"
    say(f"{mission.id}  ", (mission.state.value, style), f"  worker {worker}  {mission.title}")
    if mission.reason:
        console.print(f"  reason: {mission.reason}", highlight=False)


def _exit_for(mission: Mission) -> None:
    if mission.state in (MissionState.FAILED, MissionState.BLOCKED):
        raise typer.Exit(1)


@app.command()
def submit(
    ctx: typer.Context,
    objective: Annotated[str, typer.Argument(help="What the worker must achieve.")],
    title: Annotated[
        str | None, typer.Option(help="Short title (default: first line of the objective).")
    ] = None,
    worker: Annotated[
        str | None, typer.Option("--worker", "-w", help="A named roster worker.")
    ] = None,
    role: Annotated[
        str | None, typer.Option(help="Route to the least-loaded live worker with this role.")
    ] = None,
    specialty: Annotated[str | None, typer.Option(help="...and this specialty.")] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", "-k", help="Idempotency key: resubmits return the same mission."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Submit a mission; exit status 1 when it could not be queued (state and reason printed)."""
    client = _client(ctx)
    mission = _run(
        lambda: client.submit(
            objective, title=title, worker=worker, role=role, specialty=specialty, client_key=key
        )
    )
    _print(mission, as_json)
    _exit_for(mission)


@app.command("list")
def list_(
    ctx: typer.Context,
    state: Annotated[
        str | None, typer.Option(help="planning|executing|blocked|review|complete|failed|cancelled")
    ] = None,
    worker: Annotated[str | None, typer.Option("--worker", "-w")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 50,
    as_json: bool = JsonOption,
) -> None:
    """Missions in the ledger, newest first."""
    client = _client(ctx)
    missions = _run(lambda: client.list(state=state, worker=worker, limit=limit))
    if as_json:
        emit_json([m.dump() for m in missions])
        return
    table = Table(title=f"{len(missions)} mission(s)")
    for column in ("id", "state", "worker", "assignments", "updated", "title"):
        table.add_column(column)
    for m in missions:
        style = STYLE.get(m.state.value, "white")
        table.add_row(
            m.id,
            cell(m.state.value, style),
            m.worker_id or "-",
            str(len(m.assignments)),
            m.updated_at,
            m.title,
        )
    console.print(table)


@app.command()
def show(ctx: typer.Context, mission_id: str, as_json: bool = JsonOption) -> None:
    """One mission: ledger record, assignments, control-plane log and worker events."""
    client = _client(ctx)
    data = _run(lambda: client.show(mission_id))
    if as_json:
        emit_json(data)
        return
    mission = client.get(mission_id)
    _print(mission, False)
    console.print(f"  objective: {mission.objective.strip()[:500]}", highlight=False)
    for a in mission.assignments:
        console.print(
            f"  assignment {a.id} on {a.worker_id}: {a.state.value} (attempts {a.attempts})"
            + (f" — {a.reason}" if a.reason else ""),
            highlight=False,
        )
    table = Table(title="events")
    for column in ("at", "type", "worker", "summary"):
        table.add_column(column)
    rows = [(entry.at, f"ledger:{entry.type}", "-", entry.summary) for entry in mission.log]
    rows += [
        (
            str(event.get("at")),
            str(event.get("type")),
            str(event.get("workerId")),
            str(event.get("summary")),
        )
        for event in data.get("events", [])
    ]
    for row in sorted(
        rows, key=lambda r: r[0]
    ):  # one timeline: ledger and worker events interleaved
        table.add_row(*row)
    console.print(table)


@app.command()
def cancel(
    ctx: typer.Context,
    mission_id: str,
    reason: Annotated[
        str, typer.Option(help="Recorded in the ledger and the worker's events.")
    ] = "cancelled by the orchestrator",
    as_json: bool = JsonOption,
) -> None:
    """Cancel; a running agent is stopped at its next heartbeat."""
    client = _client(ctx)
    _print(_run(lambda: client.cancel(mission_id, reason)), as_json)


@app.command()
def resume(
    ctx: typer.Context,
    mission_id: str,
    worker: Annotated[
        str | None, typer.Option("--worker", "-w", help="Resume on another worker.")
    ] = None,
    note: Annotated[
        str | None, typer.Option(help="Why, or what changed (recorded in the ledger).")
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also when an assignment is still planning/executing (its host is gone): "
            "that assignment is settled failed and its run, if any is left, stops.",
        ),
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Dispatch a new assignment of a blocked, review or failed mission, from its latest handoff."""
    client = _client(ctx)
    why = f"abandoned by mission resume --force{': ' + note if note else ''}" if force else None
    mission = _run(lambda: client.resume(mission_id, worker=worker, note=note, force=why))
    _print(mission, as_json)
    _exit_for(mission)


@app.command()
def reap(
    ctx: typer.Context,
    older_than: Annotated[
        float | None,
        typer.Option(
            min=1, help="Heartbeat age in seconds (default: missions.reap_after_seconds)."
        ),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Resume elsewhere the executing missions whose host died (what the active beat does)."""
    from swarmq.reaper import reap as reap_pass

    client = _client(ctx)
    found = _run(lambda: reap_pass(client, older_than=older_than))
    if as_json:
        emit_json([item.__dict__ for item in found])
        return
    if not found:
        console.print("no executing mission has a stale heartbeat")
    for item in found:
        console.print(item.describe(), highlight=False)
