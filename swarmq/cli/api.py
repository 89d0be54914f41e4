"""``swarmq api``: serve the memory and missions HTTP API with uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from swarmq.cli.common import err_console, load


def api(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Bind address (default api.host: 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default api.port).")] = None,
) -> None:
    """Serve /api/swarm-memory and /api/missions (OpenAPI at /docs); loopback unless told otherwise."""
    import os

    from swarmq.api.app import serve

    roster = load(ctx)
    bind = host or roster.api.host
    token_env = roster.api.token_env
    if bind not in ("127.0.0.1", "localhost", "::1") and not (token_env and os.environ.get(token_env)):
        err_console.print(f"[yellow]warning:[/] serving on {bind} without a bearer token "
                          f"(set ${token_env} to require one)", highlight=False)
    serve(roster, host=bind, port=port)
