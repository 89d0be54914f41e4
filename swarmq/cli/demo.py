"""``swarmq demo``: watch a swarm learn in under a minute, on nothing but this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json
from swarmq.cli.console import console, say


def demo(
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", help="Empty directory for the workspace (default: a new temporary one)."
        ),
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave Redis, the workers and the beat running.")
    ] = False,
    no_tmux: Annotated[
        bool, typer.Option("--no-tmux", help="Plain background processes even if tmux exists.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds any one step may take.")] = 120.0,
    as_json: bool = JsonOption,
) -> None:
    """Two workers, an embedded Redis and a scripted EXAMPLE agent: four missions, lessons forged,
    promoted, injected and acknowledged; then everything it started is stopped (unless --keep)."""
    from swarmq.demo.run import run_demo

    def progress(step: str) -> None:
        say(("demo:", "dim"), f" {step}", stderr=True)

    report = run_demo(
        directory, keep=keep, say=progress, use_tmux=False if no_tmux else None, timeout=timeout
    )
    if as_json:
        emit_json(report.as_dict())
        return
    table = Table(title=f"swarmq demo: done in {report.seconds:.1f} s", show_header=False)
    table.add_column("step", style="bold", no_wrap=True)
    table.add_column("what happened", overflow="fold")
    for m in report.missions:
        table.add_row(f"mission ({m['worker']})", f"{m['id']} {m['title']}: {m['state']}")
    table.add_row(
        "forged",
        f"{len(report.forged)} lesson(s) from the transcripts:\n"
        + "\n".join(f"- {title}" for title in report.forged),
    )
    table.add_row("pooled", f"{report.pooled} candidate(s) scored into the pool")
    table.add_row(
        "promoted",
        f"{len(report.promoted)} learning(s): " + ", ".join(Path(p).name for p in report.promoted),
    )
    table.add_row(
        "published", f"{len(report.published)} knowledge entries: {', '.join(report.published)}"
    )
    table.add_row(
        "injected",
        f"{len(report.injected)} into the last mission's prompt: {', '.join(report.injected)}",
    )
    table.add_row(
        "acknowledged",
        f"{len(report.acknowledged)} (KNOWLEDGE_APPLIED): {', '.join(report.acknowledged)}",
    )
    before, after = report.flywheel_before, report.flywheel_after
    table.add_row(
        "flywheel",
        f"artifacts {before.get('total_artifacts')} → {after.get('total_artifacts')}, "
        f"citations {before.get('citations_this_period')} → {after.get('citations_this_period')}, "
        f"σ {before.get('sigma', 0):.2f} → {after.get('sigma', 0):.2f}, status {after.get('status')}",
    )
    for name, path in report.files.items():
        table.add_row(name, path)
    console.print(table)
    if report.stopped:
        console.print(
            f"everything the demo started is stopped; the files stay in {report.workspace}"
        )
    else:
        console.print(f"still running (--keep): swarmq --config {report.config} status")
        if report.attach:
            console.print(f"watch a worker: {report.attach}")
        console.print(f"stop it: swarmq --config {report.config} down")
