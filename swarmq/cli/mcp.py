"""``swarmq mcp``: serve the swarm to coding agents over the Model Context Protocol, and write
the server into Claude Code's or Codex's configuration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swarmq.cli.common import fail, load, state, store_locks
from swarmq.cli.console import console, err_console

DEFAULT_HTTP_PORT = 8766
"""Beside the API's default 8765."""

app = typer.Typer(
    help="Serve knowledge, memory and missions to coding agents over MCP (stdio; --http).",
    invoke_without_command=True,
)


@app.callback()
def serve(
    ctx: typer.Context,
    http: Annotated[
        bool, typer.Option("--http", help="Streamable HTTP (stateless) instead of stdio.")
    ] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = DEFAULT_HTTP_PORT,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="HTTP without a bearer token (loopback addresses only)."),
    ] = False,
    worker: Annotated[
        str | None, typer.Option(help="Act for this worker (default: $SWARMQ_WORKER_ID).")
    ] = None,
    session: Annotated[
        str | None,
        typer.Option(help="Record under this session (default: $SWARMQ_ASSIGNMENT_ID)."),
    ] = None,
) -> None:
    """Serve knowledge, memory and missions to coding agents over MCP (stdio; --http).

    Over stdio (the default) an agent starts it from `.mcp.json` or Codex's config (`swarmq mcp
    install`). `--http` serves streamable HTTP on loopback with the API's bearer token
    ($SWARMQ_API_TOKEN, else the one stored in <runtime>/api-token).
    """
    if ctx.invoked_subcommand is not None:
        return
    from swarmq.mcp.server import Caller, build_server

    roster = load(ctx)
    env = Caller.from_env()
    caller = Caller(worker or env.worker_id, session or env.session_id)
    server = build_server(roster, store_locks(roster), caller=caller)
    if not http:
        server.run("stdio")
        return
    from swarmq.cli.api import bearer_token
    from swarmq.mcp.http import PATH, serve_http

    token = bearer_token(roster, bind=host, token_env=roster.api.token_env, no_auth=no_auth)
    err_console.print(f"MCP over HTTP at http://{host}:{port}{PATH}", highlight=False)
    serve_http(server, host=host, port=port, token=token)


AgentOption = typer.Option("--agent", help="claude-code or codex.")
ScopeOption = typer.Option(
    "--scope",
    help="project (the workspace) or user (your home); default: project for claude-code, user "
    "for codex.",
)

if TYPE_CHECKING:
    from swarmq.mcp.install import Agent


def _target(ctx: typer.Context, agent: str, scope: str | None) -> tuple[Agent, Path]:
    from swarmq.mcp.install import Agent, InstallScope, config_path

    try:
        which = Agent(agent)
    except ValueError:
        fail(f"--agent must be claude-code or codex, not {agent!r}")
    if scope is None:
        scope = "project" if which is Agent.CLAUDE_CODE else "user"
    try:
        where = InstallScope(scope)
    except ValueError:
        fail(f"--scope must be project or user, not {scope!r}")
    roster = load(ctx)
    return which, config_path(which, where, roster.workspace_dir)


@app.command("install")
def install(
    ctx: typer.Context,
    agent: Annotated[str, AgentOption],
    scope: Annotated[str | None, ScopeOption] = None,
) -> None:
    """Write the swarmq server into the agent's MCP configuration (idempotent; other servers
    and settings are kept)."""
    from swarmq.mcp.install import install_server, server_command

    which, path = _target(ctx, agent, scope)
    named = state(ctx).config
    roster_file = Path(named) if named is not None else state(ctx).config_path
    argv = server_command(roster_file.resolve() if roster_file.exists() else None)
    changed = install_server(which, path, argv)
    verb = "wrote" if changed else "already up to date:"
    console.print(f"{verb} the swarmq MCP server in {path}", highlight=False, soft_wrap=True)


@app.command("uninstall")
def uninstall(
    ctx: typer.Context,
    agent: Annotated[str, AgentOption],
    scope: Annotated[str | None, ScopeOption] = None,
) -> None:
    """Remove the swarmq server from the agent's MCP configuration (the rest is kept)."""
    from swarmq.mcp.install import uninstall_server

    which, path = _target(ctx, agent, scope)
    removed = uninstall_server(which, path)
    verb = "removed the swarmq MCP server from" if removed else "no swarmq MCP server in"
    console.print(f"{verb} {path}", highlight=False, soft_wrap=True)
