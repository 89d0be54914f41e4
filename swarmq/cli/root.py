"""The ``swarmq`` typer application: the root command, its ``--config``, and the lazily imported
commands under it (swarmq.cli.lazy)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swarmq.cli.lazy import LazyGroup
from swarmq.cli.state import CliState

app = typer.Typer(
    name="swarmq",
    help="Keep an AI agent swarm's knowledge alive: Celery workers on Redis, canonical state on disk.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    cls=LazyGroup,
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
    if isinstance(ctx.obj, CliState) and ctx.obj.warm is not None:
        return  # the resident server's command: its roster is the one the asker named
    ctx.obj = CliState(config)
