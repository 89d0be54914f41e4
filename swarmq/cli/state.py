"""What the root command needs before any subcommand is imported: the ``--config`` it was
given and the guard turning lock failures into exit statuses (kept light: see swarmq.cli.lazy)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class CliState:
    config: Path | None = None

    @property
    def config_path(self) -> Path:
        from swarmq.roster.loader import find_config

        return find_config(self.config)


EXIT_REFUSED = 3
"""Exit status of a write refused by its lock (lease lapsed, fenced off, lock not acquired):
nothing was written."""
EXIT_UNCONFIRMED = 4
"""Exit status of a write that landed after its lease lapsed (see CommitUnconfirmed): it may
be overwritten, so it is never reported as done."""


def run_guarded(run: Callable[[], object]) -> None:
    """Run the CLI, turning lock failures into one clear line and a distinct exit status."""
    try:
        run()
    except Exception as exc:
        _exit_on_lock_failure(exc)
        raise


def _exit_on_lock_failure(exc: Exception) -> None:
    """Exit for a lock failure (imported only once something failed: a command that runs
    without locks never loads them)."""
    from rich.console import Console

    from swarmq.storage.locking import CommitUnconfirmed, LockError

    if isinstance(exc, CommitUnconfirmed):
        Console(stderr=True).print(
            f"[bold red]not confirmed:[/] {exc}", highlight=False, soft_wrap=True
        )
        sys.exit(EXIT_UNCONFIRMED)
    if isinstance(exc, LockError):
        Console(stderr=True).print(
            f"[bold red]refused:[/] {exc}; nothing was written", highlight=False, soft_wrap=True
        )
        sys.exit(EXIT_REFUSED)
