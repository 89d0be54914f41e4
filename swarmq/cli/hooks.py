"""``swarmq hooks install | uninstall | status``: swarmq's hooks in Claude Code's and Codex's
settings (the merge rules are in :mod:`swarmq.hooks.settings`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from swarmq.cli.common import JsonOption, emit_json
from swarmq.cli.console import console
from swarmq.hooks.events import EVENTS, Agent
from swarmq.hooks.settings import (
    Change,
    Scope,
    default_command,
    install,
    settings_path,
    status,
    uninstall,
)

app = typer.Typer(
    help="Claude Code and Codex hooks that feed the swarm and hand its knowledge back.",
    no_args_is_help=True,
)


class AgentName(StrEnum):
    claude_code = "claude-code"
    codex = "codex"


class ScopeName(StrEnum):
    project = "project"
    user = "user"


AgentOption = typer.Option(..., "--agent", help="Which agent's settings: claude-code or codex.")
ScopeOption = typer.Option(
    ScopeName.project,
    "--scope",
    help="project: .claude/settings.json or .codex/hooks.json under --dir; user: your home's.",
)
DirOption = typer.Option(
    Path("."), "--dir", help="The project directory (for --scope project).", file_okay=False
)


def _agent(value: AgentName) -> Agent:
    return "codex" if value is AgentName.codex else "claude-code"


def _scope(value: ScopeName) -> Scope:
    return "user" if value is ScopeName.user else "project"


def _report(verb: str, change: Change, as_json: bool) -> None:
    if as_json:
        emit_json(change.as_dict())
        return
    if not change.changed:
        console.print(
            f"{change.path}: nothing to {verb} (already as wanted)", highlight=False, markup=False
        )
        return
    for label, events in (
        ("added", change.added),
        ("updated", change.updated),
        ("removed", change.removed),
    ):
        if events:
            console.print(
                f"{change.path}: {label} {', '.join(events)}", highlight=False, markup=False
            )


@app.command("install")
def install_cmd(
    agent: AgentName = AgentOption,
    scope: ScopeName = ScopeOption,
    directory: Path = DirOption,
    command: str | None = typer.Option(
        None, "--command", help="The hook command (default: this installation's swarmq-hook)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Add swarmq's hooks to the agent's settings; idempotent, keeps everyone else's hooks."""
    name = _agent(agent)
    path = settings_path(name, _scope(scope), directory.resolve())
    change = install(name, path, command or default_command(name))
    store = _knowledge_store_dir(directory.resolve())
    if store is not None:
        change.notes.append(f"created {store}: the swarm's lessons are handed back from there")
    _report("install", change, as_json)
    if not as_json:
        for note in change.notes:
            console.print(f"note: {note}", highlight=False, markup=False)
    if not as_json and name == "codex":
        for note in status(name, path).notes:
            console.print(f"note: {note}", highlight=False, markup=False)


def _knowledge_store_dir(project: Path) -> Path | None:
    """The swarm's knowledge store directory (``.swarm/``), created when the roster the hooks
    will find has none: the flywheel publishes lessons only into an existing store, and a
    project that installs these hooks asks for lessons to be handed back. None: nothing made."""
    from swarmq.hooks.client import find_config
    from swarmq.roster.loader import load_roster

    config = find_config(str(project))
    if config is None:
        return None
    swarm_dir = load_roster(config).swarm_dir
    if swarm_dir.is_dir():
        return None
    swarm_dir.mkdir(parents=True)
    return swarm_dir


@app.command("uninstall")
def uninstall_cmd(
    agent: AgentName = AgentOption,
    scope: ScopeName = ScopeOption,
    directory: Path = DirOption,
    as_json: bool = JsonOption,
) -> None:
    """Remove exactly swarmq's hooks from the agent's settings."""
    name = _agent(agent)
    _report(
        "uninstall",
        uninstall(name, settings_path(name, _scope(scope), directory.resolve())),
        as_json,
    )


@app.command("status")
def status_cmd(
    agent: AgentName = AgentOption,
    scope: ScopeName = ScopeOption,
    directory: Path = DirOption,
    as_json: bool = JsonOption,
) -> None:
    """Which of swarmq's hooks are installed, the hook server and the spool of this swarm."""
    from swarmq.hooks.state import describe

    name = _agent(agent)
    project = directory.resolve()
    found = status(name, settings_path(name, _scope(scope), project))
    server = describe(project)
    if as_json:
        emit_json({**found.as_dict(), "server": server})
        return
    console.print(
        f"{found.path}: {'installed' if found.installed else 'not installed'}",
        highlight=False,
        markup=False,
    )
    for event in EVENTS[name]:
        command = found.events.get(event)
        console.print(f"  {event:<20} {command or '-'}", highlight=False, markup=False)
    for key, value in server.items():
        console.print(f"  {key}: {value}", highlight=False, markup=False)
    for note in found.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
