"""``swarmq roster``: validate and show swarm.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, print_problems, state
from swarmq.cli.console import console, say
from swarmq.roster.loader import RosterProblem, RosterReport, load_report
from swarmq.roster.schema import Roster

app = typer.Typer(help="The swarm.yaml roster.", no_args_is_help=True)


def workers_table(roster: Roster) -> Table:
    table = Table(title=f"swarm {roster.swarm}: {len(roster.workers)} worker(s)")
    for column in (
        "id",
        "name",
        "role",
        "specialty",
        "model",
        "queues",
        "concurrency",
        "pool",
        "agent",
    ):
        table.add_column(column)
    for w in roster.workers:
        table.add_row(
            w.id,
            w.display_name,
            w.role,
            w.specialty or "",
            w.model or "",
            ", ".join(w.all_queues()),
            str(w.concurrency),
            w.pool.value,
            " ".join(w.agent.command) if w.agent else "",
        )
    return table


def roster_json(roster: Roster) -> dict[str, Any]:
    data = roster.model_dump(mode="json")
    data["broker_url"] = roster.effective_broker_url
    for worker, raw in zip(roster.workers, data["workers"], strict=True):
        raw["all_queues"] = worker.all_queues()
    return data


def _check_scheduled_tasks(report: RosterReport) -> None:
    """A schedule naming a task nobody registers is an error the loader alone cannot see."""
    from swarmq.workers.app import unregistered_schedule

    assert report.roster is not None
    for name, task, close in unregistered_schedule(report.roster):
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        report.problems.append(
            RosterProblem(
                "error",
                f"schedule[{name!r}].task",
                f"no task named {task!r} is registered{hint}",
                str(report.file),
            )
        )
    if report.errors:
        report.roster = None


def _schedule_line(roster: Roster) -> str:
    """The beat's entries, the defaults marked (the roster did not write them)."""
    from swarmq.roster.schedule import default_schedule, effective_schedule

    defaults = default_schedule(roster)
    return (
        ", ".join(
            f"{n}→{e.task}" + (" (default)" if n in defaults and n not in roster.schedule else "")
            for n, e in effective_schedule(roster).items()
        )
        or "none"
    )


@app.command()
def validate(
    ctx: typer.Context,
    file: Annotated[
        Path | None,
        typer.Argument(help="Roster file (default: --config, $SWARMQ_CONFIG, ./swarm.yaml)."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Check a roster: print its workers, or every error (exit status 1)."""
    report = load_report(file or state(ctx).config_path)
    if report.roster is not None:
        from swarmq.roster.agents import agent_problems

        report.problems += agent_problems(report.roster, report.file)
        _check_scheduled_tasks(report)
    if as_json:
        emit_json(
            {
                "file": str(report.file),
                "valid": report.roster is not None,
                "problems": [p.as_dict() for p in report.problems],
                "workers": [w.model_dump(mode="json") for w in report.roster.workers]
                if report.roster
                else [],
            }
        )
        if report.roster is None:
            raise typer.Exit(1)
        return
    print_problems(report)
    if report.roster is None:
        fail(f"{report.file}: {len(report.errors)} error(s)")
    console.print(workers_table(report.roster))
    say((f"{report.file}: valid", "green"), f" ({len(report.warnings)} warning(s))")


@app.command()
def show(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Print the resolved roster: absolute paths, defaults filled in."""
    report = load_report(state(ctx).config_path)
    if report.roster is None:
        print_problems(report)
        fail(f"{report.file}: invalid roster")
    roster = report.roster
    if as_json:
        emit_json(roster_json(roster))
        return
    table = Table(title=f"swarm {roster.swarm}", show_header=False)
    table.add_column("setting")
    table.add_column("value")
    rows = [
        ("file", str(report.file)),
        ("workspace", str(roster.workspace_dir)),
        ("profiles", str(roster.profiles_dir)),
        ("runtime", str(roster.runtime_dir)),
        ("shared", str(roster.shared_dir)),
        ("hive", str(roster.hive_dir)),
        ("redis", roster.redis_url),
        ("broker", roster.effective_broker_url),
        ("llm", roster.llm.provider.value),
        (
            "quotas",
            ", ".join(
                f"{n}={q.max_calls_per_day}/day ({q.window.value})"
                for n, q in roster.quotas.items()
            ),
        ),
        ("schedule", _schedule_line(roster)),
    ]
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    console.print(workers_table(roster))


@app.command()
def compose(ctx: typer.Context) -> None:
    """Print a docker-compose.yml for this roster (redirect it to docker-compose.yml)."""
    from swarmq.workers.compose import render_text

    roster = load_report(state(ctx).config_path).roster
    if roster is None:
        fail("invalid roster: run `swarmq roster validate`")
    typer.echo(render_text(roster), nl=False)


@app.command()
def init(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Create profile memory (MEMORY/IDENTITY/SOUL, runtime.json) for every worker; keeps human edits."""
    from swarmq.cli.common import load, store_locks
    from swarmq.wiring.profiles import ensure_roster_profiles

    roster = load(ctx)
    actions = ensure_roster_profiles(roster, store_locks(roster))
    if as_json:
        emit_json({"profiles": str(roster.profiles_dir), "workers": actions})
        return
    table = Table(title=f"profiles under {roster.profiles_dir}")
    for column in ("worker", "MEMORY.md", "IDENTITY.md", "SOUL.md"):
        table.add_column(column)
    for worker_id, files in actions.items():
        table.add_row(
            worker_id, *(files.get(name, "") for name in ("MEMORY.md", "IDENTITY.md", "SOUL.md"))
        )
    console.print(table)
