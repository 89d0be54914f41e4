"""``swarmq metrics``: the Prometheus exporter of the swarm's figures (``/metrics``)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from swarmq.cli.common import load


def metrics(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Bind address (default metrics.host: 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default metrics.port: 9464).")] = None,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="Serve without a bearer token (loopback addresses only)."),
    ] = False,
    once: Annotated[
        bool, typer.Option("--once", help="Print one scrape to stdout and exit (serve nothing).")
    ] = False,
) -> None:
    """Serve /metrics in the Prometheus text format: quotas, LLM spend, knowledge, flywheel,
    missions.

    The bearer token is the API's (``metrics.token_env``, else ``api.token_env``, else the
    token stored in ``<runtime>/api-token``); Prometheus sends it with
    ``authorization: {credentials_file: ...}`` (see deploy/prometheus/prometheus.yml).
    """
    roster = load(ctx)
    if once:
        from swarmq.wiring.figures import FigureReader
        from swarmq.wiring.metrics import exposition, figure_registry

        sys.stdout.buffer.write(exposition(figure_registry(FigureReader(roster))))
        sys.stdout.flush()
        return
    from swarmq.api.metrics import serve_exporter
    from swarmq.cli.api import bearer_token

    config = roster.metrics
    bind = host or config.host
    token = bearer_token(
        roster, bind=bind, token_env=config.token_env or roster.api.token_env, no_auth=no_auth
    )
    serve_exporter(roster, host=bind, port=port or config.port, token=token)
