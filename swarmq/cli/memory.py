"""``swarmq memory search``: recall from worker and shared memory at the terminal."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, console, emit_json, fail, load
from swarmq.memory.paths import UnsafePathError, check_id
from swarmq.memory.search import Scope, SearchError, memory_search

app = typer.Typer(help="Worker and shared swarm memory (Swarm2 layout).", no_args_is_help=True)


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words or a phrase to find.")],
    worker: Annotated[
        str | None, typer.Option("--worker", "-w", help="A roster worker's memory.")
    ] = None,
    scope: Annotated[Scope, typer.Option(help="worker, shared or all.")] = Scope.ALL,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 10,
    budget: Annotated[int | None, typer.Option(help="Character budget of the snippets.")] = None,
    reindex: Annotated[
        bool, typer.Option("--reindex", help="First reconcile every file (shows hand edits now).")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Exact phrase > token overlap > recency, with file and line of every snippet."""
    roster = load(ctx)
    if worker is not None:
        try:
            check_id(worker, "worker id")
            roster.worker(worker)
        except (UnsafePathError, KeyError) as exc:
            fail(str(exc))
    if scope is Scope.WORKER and worker is None:
        fail("--scope worker needs --worker")
    try:
        searcher = memory_search(roster.profiles_dir, roster.shared_dir)
        if reindex:
            searcher.index.refresh()
        result = searcher.search(
            query, scope=scope, worker_id=worker, limit=limit,
            budget_chars=budget or roster.missions.search_budget_chars,
        )  # fmt: skip
    except SearchError as exc:
        fail(str(exc))
    if as_json:
        emit_json({"query": query, "scope": scope.value, "workerId": worker, "truncated": result.truncated,
                   "results": [hit.as_dict() for hit in result.hits]})  # fmt: skip
        return
    table = Table(
        title=f"{len(result.hits)} hit(s) for {query!r}"
        + (" (budget reached)" if result.truncated else "")
    )
    for column in ("where", "match", "snippet"):
        table.add_column(column)
    for hit in result.hits:
        table.add_row(
            f"{hit.path}:{hit.line}", "phrase" if hit.phrase else f"{hit.overlap:.2f}", hit.snippet
        )
    console.print(table)
