"""``swarmq workspace``: the identity of a workspace (or other canonical root)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swarmq.cli.common import JsonOption, emit_json
from swarmq.storage.reidentify import reidentify

app = typer.Typer(
    help="The workspace identity that names its store locks (.swarmq-workspace).",
    no_args_is_help=True,
)


@app.command("reidentify")
def workspace_reidentify(
    root: Annotated[
        Path, typer.Argument(help="The copied workspace (or profiles / shared / hive root).")
    ] = Path("."),
    locks: Annotated[
        str | None,
        typer.Option(help="Lock mode for a root with no id file: cluster or single-host."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Give a copied workspace its own id and rename its copied fence records to it.

    Run it on the copy, before any writer uses it: the copy's stores then lock names of their
    own, and no fence record refuses its writers.
    """
    done = reidentify(root, locks=locks)
    if as_json:
        emit_json(
            {
                "root": str(done.root),
                "old_id": done.old_id,
                "new_id": done.new_id,
                "locks": done.locks,
                "rewritten": [str(p) for p in done.rewritten],
                "skipped": done.skipped,
            }
        )
        return
    was = f" (was {done.old_id})" if done.old_id else " (it had none)"
    typer.echo(f"{done.root}: new id {done.new_id}{was}, locks {done.locks}")
    typer.echo(f"{len(done.rewritten)} fence record(s) now name the new id")
    for line in done.skipped:
        typer.echo(f"left as it was: {line}")
