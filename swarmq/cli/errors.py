"""One handler for every error swarmq raises on purpose, as the API has one per family.

A command lets a :class:`~swarmq.errors.SwarmqError` propagate; the root group
(:class:`swarmq.cli.lazy.LazyGroup`) hands it to :func:`exit_for`, which prints one plain line
on stderr (the message is text, never read as Rich markup, and no traceback) and exits with the
status of the error's family, looked up along its MRO exactly as the API looks up its HTTP status
(``api/app.py``). Every family exits 1, the shell's "it failed"; three outcomes a script must
tell apart have statuses of their own: a write refused by its lock (nothing was written, 3), a
write that landed after its lease lapsed (it may be overwritten, 4) and a full disk (5). A command catches an error
itself only to add what it knows (a hint, a fallback, a JSON answer).

Kept light: the lock classes and Rich are imported only once something failed.
"""

from __future__ import annotations

from typing import NamedTuple, NoReturn

import typer

from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError, Unavailable

EXIT_ERROR = 1
"""Exit status of every error family (and of ``fail``)."""
EXIT_REFUSED = 3
"""Exit status of a write refused by its lock (lease lapsed, fenced off, lock not acquired):
nothing was written."""
EXIT_UNCONFIRMED = 4
"""Exit status of a write that landed after its lease lapsed (see CommitUnconfirmed): it may
be overwritten, so it is never reported as done."""
EXIT_NO_SPACE = 5
"""Exit status of a write refused for space (see DiskFull: "no space left on <path>"): the
file it was writing is as it was; free space and run the command again."""


class Outcome(NamedTuple):
    """How the CLI reports an error: exit status, the label before the message, what follows it."""

    status: int
    label: str = "error:"
    suffix: str = ""


FAMILY_EXIT: dict[type[SwarmqError], Outcome] = {
    InvalidInput: Outcome(EXIT_ERROR),
    NotFound: Outcome(EXIT_ERROR),
    Conflict: Outcome(EXIT_ERROR),
    Unavailable: Outcome(EXIT_ERROR),
    SwarmqError: Outcome(EXIT_ERROR),
}
"""The outcome of each family; :func:`outcome` puts the two lock outcomes in front."""


def outcome(exc: SwarmqError) -> Outcome:
    """The outcome of ``exc``: the first class of its MRO with one (storage outcomes first)."""
    from swarmq.storage.locking import CommitUnconfirmed, LockError
    from swarmq.storage.space import DiskFull

    table: dict[type[SwarmqError], Outcome] = {
        DiskFull: Outcome(EXIT_NO_SPACE),
        CommitUnconfirmed: Outcome(EXIT_UNCONFIRMED, "not confirmed:"),
        LockError: Outcome(EXIT_REFUSED, "refused:", "; nothing was written"),
        **FAMILY_EXIT,
    }
    return next(table[cls] for cls in type(exc).__mro__ if cls in table)


def report(label: str, message: str) -> None:
    """Print ``label message`` on stderr: the label in bold red, the message as plain text."""
    from rich.console import Console
    from rich.text import Text

    line = Text.assemble((label, "bold red"), " ", message)
    Console(stderr=True).print(line, highlight=False, soft_wrap=True)


def exit_for(exc: SwarmqError) -> NoReturn:
    """Report ``exc`` in one line and exit with its family's status."""
    status, label, suffix = outcome(exc)
    report(label, f"{exc}{suffix}")
    raise typer.Exit(status) from exc
