"""``swarmq lookup``: what every store knows about a query, and the flywheel artifacts behind
it cited (exposure unless told otherwise).

Its own module, apart from ``forge``, so a lookup imports the federated search alone: not the
forge's extractor, its LLM wiring or the Redis client (the citations it records connect at
their lock, see :func:`swarmq.cli.common.store_locks`).
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, load, workspace
from swarmq.cli.console import console
from swarmq.flywheel.citations import CitationType

SESSION_ENV = ("SWARMQ_SESSION_ID", "CLAUDE_SESSION_ID", "CODEX_SESSION_ID")


def _session(explicit: str | None) -> str:
    if explicit:
        return explicit
    for name in SESSION_ENV:
        if os.environ.get(name):
            return os.environ[name]
    return f"lookup-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


def lookup(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What you are about to work on.")],
    limit: Annotated[
        int | None,
        typer.Option(min=1, max=200, help="Most results (default flywheel.lookup_limit)."),
    ] = None,
    session: Annotated[
        str | None, typer.Option(help="Session id recorded on the citations.")
    ] = None,
    cite_as: Annotated[
        str,
        typer.Option(
            "--cite-as",
            help="Citation type: retrieved (exposure), helpful, "
            "harmful, used-in-final-artifact, applied, reference.",
        ),
    ] = "retrieved",
    no_cite: Annotated[
        bool, typer.Option("--no-cite", help="Search only; record no citation.")
    ] = False,
    no_pool: Annotated[
        bool, typer.Option("--no-pool", help="Learnings and patterns only.")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Find what every store knows about QUERY, each fact once, and cite the flywheel artifacts found.

    Every store: learnings, patterns, pool candidates, swarm and hive entries, worker and
    shared memory. The default citation is ``retrieved``: exposure, which confirms nothing."""
    from swarmq.federated.lookup import lookup as run_lookup

    roster = load(ctx)
    if cite_as not in CitationType.ALL:
        fail(f"unknown citation type {cite_as!r}; one of {', '.join(sorted(CitationType.ALL))}")
    session_id = _session(session)
    hits, cited = run_lookup(
        workspace(ctx, roster),
        query,
        session_id=session_id,
        limit=limit or roster.flywheel.lookup_limit,
        cite=not no_cite,
        citation_type=cite_as,
        include_pool=not no_pool,
    )
    if as_json:
        emit_json(
            {
                "query": query,
                "session_id": session_id,
                "cited": cited,
                "results": [h.as_dict() for h in hits],
            }
        )
        return
    if not hits:
        console.print(
            f"nothing matches {query!r} in any store: lookup searches learnings, patterns, pool "
            "candidates (`swarmq pool list`), swarm and hive knowledge entries and worker and "
            "shared memory; try other or fewer words"
        )
        return
    table = Table(title=f"lookup: {query}")
    for column in ("score", "store", "id", "lesson", "where"):
        table.add_column(column, overflow="fold" if column in ("lesson", "where") else "ellipsis")
    for h in hits:
        found = h.finding
        where = "; ".join(f"{f.store.value} {f.location}" for f in h.members)
        table.add_row(f"{h.score:.4f}", found.store.value, found.id[:24], found.text, where)
    console.print(table)
    if not no_cite:
        console.print(
            f"cited {cited} flywheel artifact(s) as {cite_as} for session {session_id}",
            style="dim",
        )
