"""``swarmq workspace``: the identity and lock mode recorded beside the stores
(``.swarmq-workspace``).

A workspace is written under one lock discipline (docs/locking.md): the mode is recorded the
first time a process marks it, and a process of the other mode is refused. Commands run without
a ``swarm.yaml`` record ``single-host``; a swarm added later needs ``cluster``, so switching is
one command here rather than an edit of the id file by hand. A copied workspace keeps its
original's id, so its copied fence records would refuse its writers: ``reidentify`` gives the copy
an id of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from swarmq.cli.common import JsonOption, emit_json, fail, load
from swarmq.cli.console import console, say
from swarmq.roster.schema import Roster
from swarmq.storage.reidentify import reidentify

app = typer.Typer(
    help="The workspace's recorded lock mode and identity (set-locks, reidentify).",
    no_args_is_help=True,
)

Mode = Literal["cluster", "single-host"]


def _running_here(ctx: typer.Context, roster: Roster) -> list[str]:
    """This host's processes of the swarm that hold cluster locks (workers, beat)."""
    from swarmq.cli.common import state
    from swarmq.workers.launcher import Supervisor
    from swarmq.workers.processes import Kind

    supervisor = Supervisor(roster, state(ctx).config_path)
    return [
        spec.name
        for spec in supervisor.specs()
        if spec.kind in (Kind.WORKER, Kind.BEAT) and supervisor.running(spec)
    ]


@app.command("set-locks")
def set_locks(
    ctx: typer.Context,
    mode: Annotated[
        str, typer.Argument(help="cluster (Redis locks: workers, `swarmq up`) or single-host.")
    ],
    as_json: bool = JsonOption,
) -> None:
    """Record MODE as the workspace's lock mode (after stopping the other mode's writers)."""
    from swarmq.coord.lockmode import switch_lock_mode

    if mode not in ("cluster", "single-host"):
        fail(f"mode must be cluster or single-host, not {mode!r}")
    chosen: Mode = "cluster" if mode == "cluster" else "single-host"
    roster = load(ctx)
    if roster.locks != chosen:
        fail(
            f"the roster says locks: {roster.locks}; a workspace recorded as {chosen} would "
            f"refuse it. Set `locks: {chosen}` in swarm.yaml first; nothing was changed"
        )
    if chosen == "single-host":
        running = _running_here(ctx, roster)
        if running:
            fail(
                f"{', '.join(running)} of swarm {roster.swarm} run here and hold cluster locks: "
                "run `swarmq down` (on every host) first; nothing was changed"
            )
    switched = switch_lock_mode(roster.cluster_config(), chosen)
    if as_json:
        emit_json({"locks": chosen, "roots": [{"root": str(r), "was": was} for r, was in switched]})
        return
    for root, was in switched:
        before = "unmarked" if was is None else was
        console.print(f"{root}: {before} -> {chosen}", highlight=False, markup=False)


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
    say(f"{done.root}: new id {done.new_id}{was}, locks {done.locks}")
    say(f"{len(done.rewritten)} fence record(s) now name the new id")
    for line in done.skipped:
        say(f"left as it was: {line}")
