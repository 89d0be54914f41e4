"""The ``swarmq`` command line (typer + rich); every read command takes ``--json``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swarmq.cli import (
    api,
    curate,
    deadletter,
    demo,
    knowledge,
    llm,
    memory,
    mission,
    processes,
    quota,
    roster,
    skills,
)
from swarmq.cli import consolidate as consolidate_cli
from swarmq.cli import eval as eval_cli
from swarmq.cli import flywheel as flywheel_cli
from swarmq.cli import forge as forge_cli
from swarmq.cli import pool as pool_cli
from swarmq.cli.common import CliState, run_guarded

app = typer.Typer(
    name="swarmq",
    help="Keep an AI agent swarm's knowledge alive: Celery workers on Redis, canonical state on disk.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            envvar="SWARMQ_CONFIG",
            help="swarm.yaml to use (default ./swarm.yaml).",
        ),
    ] = None,
) -> None:
    ctx.obj = CliState(config)


# Running the swarm
app.command()(demo.demo)
app.command()(processes.up)
app.command()(processes.reload)
app.command()(processes.down)
app.command()(processes.status)
app.add_typer(roster.app, name="roster")
# Missions and worker memory
app.add_typer(mission.app, name="mission")
app.add_typer(memory.app, name="memory")
app.command("api")(api.api)
# Knowledge: stores, forge and flywheel, curation, skills, consolidation
app.add_typer(knowledge.app, name="knowledge")
app.command()(forge_cli.forge)
app.command()(forge_cli.lookup)
app.add_typer(pool_cli.app, name="pool")
app.add_typer(flywheel_cli.app, name="flywheel")
app.command()(curate.curate)
app.add_typer(skills.app, name="skills")
app.command()(consolidate_cli.consolidate)
# Quality on labelled real data
app.add_typer(eval_cli.app, name="eval")
# Budgets and operations
app.add_typer(quota.app, name="quota")
app.add_typer(llm.app, name="llm")
app.add_typer(deadletter.app, name="deadletter")


def main() -> None:
    run_guarded(app)
