"""What every command shares: the roster option, JSON output, error exits."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from swarmq.cli.console import notice, say
from swarmq.cli.errors import EXIT_ERROR, report
from swarmq.cli.state import CliState
from swarmq.roster.loader import CONFIG_ENV, DEFAULT_CONFIG, RosterReport, load_report
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks

if TYPE_CHECKING:
    from swarmq.coord.cluster import Cluster
    from swarmq.federated.stores import Stores


JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON instead of a table.")


def state(ctx: typer.Context) -> CliState:
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Exit with ``code`` after one line on stderr; the message is plain text, never markup."""
    report("error:", message)
    raise typer.Exit(code)


def print_problems(report: RosterReport) -> None:
    for problem in report.problems:
        style = "red" if problem.severity == "error" else "yellow"
        say((str(problem), style), stderr=True)


FILE_LEVEL = frozenset(
    {
        "knowledge",
        "forge",
        "pool",
        "lookup",
        "flywheel",
        "consolidate",
        "memory",
        "mcp",
        "learn",
        "workspace",
    }
)
"""Commands that only touch a project's files: they run without a swarm.yaml."""


def _file_level(ctx: typer.Context) -> bool:
    root = ctx.find_root().command_path  # "swarmq", or "python -m swarmq.cli"
    words = ctx.command_path.removeprefix(root).split()
    top = words[0] if words else None
    if top == "consolidate":
        return bool(ctx.params.get("dry_run"))
    return top in FILE_LEVEL


def implicit(ctx: typer.Context, path: Path | None) -> Roster | None:
    """A default roster for the project around the current directory, when a file-level command
    runs where there is no swarm.yaml (and none was named)."""
    if path is not None or state(ctx).config is not None or os.environ.get(CONFIG_ENV):
        return None
    if Path(DEFAULT_CONFIG).exists() or not _file_level(ctx):
        return None
    from swarmq.roster.implicit import find_project, implicit_roster

    project = find_project(Path.cwd())
    if project is None:
        return None
    if (project / DEFAULT_CONFIG).is_file():  # the project's own roster, from a subdirectory
        state(ctx).config = project / DEFAULT_CONFIG
        return None
    roster = implicit_roster(project)
    stores = " and ".join(s for s in (".swarm/", ".agents/") if (project / s).is_dir())
    notice(f"no {DEFAULT_CONFIG}: using the project at {project} ({stores}) with default settings")
    return roster


def load(ctx: typer.Context, path: Path | None = None) -> Roster:
    """The roster, or every error printed and exit status 1 (nothing is started)."""
    warm = state(ctx).warm
    if warm is not None and path is None:  # the resident server's, loaded from the same file
        return warm.roster
    made_up = implicit(ctx, path)
    if made_up is not None:
        return made_up
    report = load_report(path or state(ctx).config_path)
    if report.roster is None:
        print_problems(report)
        if not report.file.exists():
            fail(
                f"{report.file}: no roster here; write one (README, 'The roster'), pass --config "
                "FILE, or run `swarmq demo` to see a swarm work; nothing was done"
            )
        fail(f"{report.file}: invalid roster ({len(report.errors)} error(s)); nothing was done")
    return report.roster


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def store_locks(
    roster: Roster, cluster: Cluster | None = None, *, reading: bool = False
) -> StoreLocks:
    """The one lock discipline of the roster's workspace (see swarmq.coord.lockmode): Redis locks
    (through ``cluster`` when the command already holds one), or same-host file locks when the
    roster says ``locks: single-host``. With the cluster's Redis unreachable, reading commands
    still run and the first write is refused, naming the URL (never a fallback to same-host
    locks), and so they do when the workspace records the other lock mode, the refusal naming
    the command that switches it.

    ``reading``: the command reads, and writes at most what it records of the read (receipts,
    citations); Redis is asked at its first write, not before, so a read neither waits on the
    connection nor imports the client, and no notice is said up front (an unreachable Redis is
    then the first write's refusal, exit 3, nothing written)."""
    from swarmq.coord.lockmode import store_locks as select
    from swarmq.storage.locking import LockError

    try:
        if cluster is not None:
            return select(roster.cluster_config(), cluster)
        locks = select(roster.cluster_config(), lazy=True, deferred=reading)
    except LockError as exc:  # no lock discipline yet: an error (1), not a refused write (3)
        fail(str(exc))
    locks_notice(locks)
    return locks


def locks_notice(locks: StoreLocks) -> None:
    """Say on stderr when ``locks`` only read (see :func:`store_locks`)."""
    from swarmq.coord.lockmode import MismatchedLocks, UnreachableLocks

    if isinstance(locks, MismatchedLocks):
        notice(f"reading only, writes are refused: {locks.reason}")
    elif isinstance(locks, UnreachableLocks):
        notice(
            f"{locks.reason}: reading only, writes are refused "
            "(on a machine with no cluster set `locks: single-host`)"
        )


def workspace(ctx: typer.Context, roster: Roster) -> Stores:
    """Every store of the roster's workspace, under :func:`store_locks` for a reading command
    (search, inject, recall, lookup: Redis asked at the first write); in the resident server
    (``swarmq.cli.served``) the warm ones it keeps, with the notice its locks call for."""
    warm = state(ctx).warm
    if warm is not None and warm.roster is roster:
        locks_notice(warm.locks)
        return warm.stores
    from swarmq.wiring.federated import workspace_stores

    return workspace_stores(roster, store_locks(roster, reading=True))
