"""The one CLI error handler: a family gives the exit status, the message is printed as text."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from swarmq.cli.errors import EXIT_ERROR, EXIT_REFUSED, EXIT_UNCONFIRMED, outcome
from swarmq.cli.lazy import LazyGroup
from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError, Unavailable
from swarmq.flywheel.pool import CandidateNotFound
from swarmq.storage.locking import CommitUnconfirmed, FencedOff, LockError, LockTimeout


@pytest.mark.parametrize(
    ("exc", "status", "label"),
    [
        (InvalidInput, EXIT_ERROR, "error:"),
        (NotFound, EXIT_ERROR, "error:"),
        (Conflict, EXIT_ERROR, "error:"),
        (Unavailable, EXIT_ERROR, "error:"),
        (SwarmqError, EXIT_ERROR, "error:"),
        (CandidateNotFound, EXIT_ERROR, "error:"),
        (LockError, EXIT_REFUSED, "refused:"),
        (LockTimeout, EXIT_REFUSED, "refused:"),
        (FencedOff, EXIT_REFUSED, "refused:"),
        (CommitUnconfirmed, EXIT_UNCONFIRMED, "not confirmed:"),
    ],
)
def test_exit_status_per_family(exc: type[SwarmqError], status: int, label: str) -> None:
    found = outcome(exc("x"))
    assert (found.status, found.label) == (status, label)


def _app(error: Exception) -> typer.Typer:
    app = typer.Typer(cls=LazyGroup)

    @app.command("boom")
    def boom() -> None:
        raise error

    @app.command("fine")
    def fine() -> None:
        print("ok")

    return app


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (InvalidInput("bad id '[bold]x[/]' in [red]y"), 1, "error: bad id '[bold]x[/]' in [red]y"),
        (NotFound("no candidate 'c-1'"), 1, "error: no candidate 'c-1'"),
        (LockTimeout("lock swarm busy"), 3, "refused: lock swarm busy; nothing was written"),
        (CommitUnconfirmed("lease lapsed"), 4, "not confirmed: lease lapsed"),
    ],
)
def test_a_command_raising_a_swarmq_error_exits_with_one_plain_line(
    error: SwarmqError, status: int, line: str
) -> None:
    app = _app(error)
    done = CliRunner().invoke(app, ["boom"])
    assert done.exit_code == status
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert line in done.output and "Traceback" not in done.output
    assert CliRunner().invoke(app, ["fine"]).output == "ok\n"


def test_other_exceptions_are_not_swallowed() -> None:
    done = CliRunner().invoke(_app(RuntimeError("a bug")), ["boom"])
    assert done.exit_code == 1 and isinstance(done.exception, RuntimeError)
