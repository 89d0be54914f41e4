"""The ``swarmq`` command line (typer + rich); every read command takes ``--json``.

Each top-level command is imported only when it runs (see swarmq.cli.lazy): ``swarmq --help``
and a file-level command start without Celery, Redis, numpy or the other commands' domains. A
reading command run by a program (no terminal) is first offered to the swarm's resident server
(swarmq.cli.resident: standard library only, before typer is imported), which answers it from
its warm stores exactly as this process would have; when none answers it runs here.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's flag without importing typing (2 ms of a fresh process)
if TYPE_CHECKING:
    from typing import Any

    import typer

    app: typer.Typer


def main() -> None:
    from swarmq.cli.resident import answered

    code = answered(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from swarmq.cli.root import app

    app()


def __getattr__(name: str) -> Any:
    if name == "app":  # the typer application, imported on first use (main need not)
        from swarmq.cli.root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
