"""``swarmq api``: serve the memory and missions HTTP API with uvicorn."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from swarmq.cli.common import fail, load
from swarmq.cli.console import say, warning

if TYPE_CHECKING:
    from swarmq.roster.schema import Roster

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def api(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Bind address (default api.host: 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default api.port).")] = None,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="Serve without a bearer token (loopback addresses only)."),
    ] = False,
) -> None:
    """Serve /api/swarm-memory and /api/missions (OpenAPI at /docs); loopback unless told otherwise.

    Every request needs a bearer token: ``$SWARMQ_API_TOKEN`` (the roster's ``api.token_env``),
    or else one generated on first use, stored owner-only in ``<runtime>/api-token`` and
    printed once.
    """
    from swarmq.api.app import serve

    roster = load(ctx)
    bind = host or roster.api.host
    token = bearer_token(roster, bind=bind, token_env=roster.api.token_env, no_auth=no_auth)
    serve(roster, host=bind, port=port, token=token)


def bearer_token(roster: Roster, *, bind: str, token_env: str | None, no_auth: bool) -> str | None:
    """The token a server on ``bind`` demands: ``$token_env``, else the one stored owner-only in
    ``<runtime>/api-token`` (created and printed once); ``None`` only for ``--no-auth`` on a
    loopback address. The API and the metrics exporter share it."""
    from swarmq.api.guard import load_or_create_token

    token: str | None = os.environ.get(token_env) if token_env else None
    if no_auth:
        if bind not in LOOPBACK:
            fail(
                f"--no-auth serves loopback addresses only, not {bind}; use a token to expose the API"
            )
        if token:
            fail(f"--no-auth given but ${token_env} is set; unset one of them")
        warning("serving without authentication (loopback only)")
        return None
    if token:
        return token
    try:
        token, created = load_or_create_token(roster.runtime_dir)
    except PermissionError as exc:
        fail(str(exc))
    where = roster.runtime_dir / "api-token"
    if created:
        say(f"API bearer token (shown once; stored owner-only in {where}): {token}")
    else:
        say(f"using the API bearer token stored in {where}", stderr=True)
    return token
