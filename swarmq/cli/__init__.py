"""The ``swarmq`` command line (typer + rich); every read command takes ``--json``.

Each top-level command is imported only when it runs (see swarmq.cli.lazy): ``swarmq --help``
and a file-level command start without Celery, Redis, numpy or the other commands' domains.
"""

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
    ctx.obj = CliState(config)


def main() -> None:
    app()
