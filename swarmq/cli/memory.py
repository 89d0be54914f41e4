"""``swarmq memory search``: recall from worker and shared memory at the terminal.

Memory only, by design: its answer is memory's own (worker or shared scope, snippets with their
neighbouring lines and file:line, a character budget), the verb a worker's ``memory_search``
tool mirrors. The question "what does this workspace know about X" is ``knowledge search`` (every
store fused); ``--every-store`` asks that here too, and an empty memory answer shows what the
other stores hold beside it, so a lesson kept in ``.swarm/`` is never reported as unknown."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated

import typer

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks
from swarmq.cli.console import console, say
from swarmq.profiles.search import Scope, memory_search
from swarmq.storage.paths import check_id

if TYPE_CHECKING:
    from swarmq.federated.finding import Fused
    from swarmq.roster.schema import Roster

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
    every_store: Annotated[
        bool,
        typer.Option(
            "--every-store",
            help="Ask every store instead (knowledge entries, learnings, pool candidates, "
            "memory), as `swarmq knowledge search` does.",
        ),
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Exact phrase > token overlap > recency, with file and line of every snippet. Memory
    only (its scopes, snippets and budget are memory's); when memory holds nothing, what the
    other stores hold is shown beside the empty answer."""
    roster = load(ctx)
    if worker is not None:
        try:
            check_id(worker, "worker id")
            roster.worker(worker)
        except KeyError as exc:  # a worker the roster does not name
            fail(str(exc))
    if scope is Scope.WORKER and worker is None:
        fail("--scope worker needs --worker")
    if every_store:
        found = _elsewhere(roster, query, worker, limit)
        if as_json:
            emit_json([r.as_dict() for r in found])
            return
        from swarmq.cli.knowledge import fused_table

        console.print(fused_table(f"every store: {query}", found))
        return
    searcher = memory_search(roster.profiles_dir, roster.shared_dir)
    if reindex:
        searcher.index.refresh()
    result = searcher.search(
        query, scope=scope, worker_id=worker, limit=limit,
        budget_chars=budget or roster.missions.search_budget_chars,
    )  # fmt: skip
    # Memory empty: the question may still have an answer in another store (the same lesson
    # in .swarm/, a learning); shown beside the empty answer, never mixed into memory's.
    elsewhere = _elsewhere(roster, query, worker, ELSEWHERE) if not result.hits else []
    if as_json:
        emit_json({"query": query, "scope": scope.value, "workerId": worker, "truncated": result.truncated,
                   "results": [hit.as_dict() for hit in result.hits],
                   **({"elsewhere": [r.as_dict() for r in elsewhere]} if not result.hits else {})})  # fmt: skip
        return
    title = f"{len(result.hits)} hit(s) for {query!r}" + (
        " (budget reached)" if result.truncated else ""
    )
    console.print(title, style="bold")
    if not result.hits and elsewhere:
        from swarmq.cli.knowledge import fused_table

        console.print(
            f"memory holds nothing for {query!r}; other stores do "
            f"(`swarmq memory search --every-store` or `swarmq knowledge search` for more):",
            style="dim",
        )
        console.print(fused_table(f"other stores: {query}", elsewhere))
    elif not result.hits:
        console.print(
            "memory search reads the workers' memory (profiles/) and the shared swarm memory, "
            "and no other store holds it either; try fewer words",
            style="dim",
        )
    for hit in result.hits:
        match = "phrase" if hit.phrase else f"tokens {hit.overlap:.2f}"
        say("\n", (f"{hit.path}:{hit.line}", "cyan"), "  ", (match, "dim"))
        for line in clean_snippet(hit.path, hit.snippet, hit.line):
            say(f"  {line}")


ELSEWHERE = 3
"""Results of the other stores shown beside an empty memory answer."""


def _elsewhere(roster: Roster, query: str, worker: str | None, limit: int) -> list[Fused]:
    """Every store's fused answer (``swarmq.federated.search.ask``, as ``knowledge search``)."""
    from swarmq.federated.search import ask
    from swarmq.knowledge.query import QueryContext
    from swarmq.wiring.federated import workspace_stores

    stores = workspace_stores(roster, store_locks(roster, reading=True), worker_id=worker)
    return ask(stores, QueryContext(text=query), limit=limit)


_TEXT_KEYS = ("summary", "lesson", "text", "title", "message", "content", "objective", "reason")
_LABEL_KEYS = ("type", "kind", "state", "status", "category")


def _jsonl_line(text: str) -> str:
    """A JSONL record as one readable line: its label fields and its main text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if not isinstance(value, dict):
        return text
    labels = [
        str(value[k])
        for k in _LABEL_KEYS
        if isinstance(value.get(k), str | int) and value.get(k) != ""
    ]
    body = next(
        (str(value[k]) for k in _TEXT_KEYS if isinstance(value.get(k), str) and value[k].strip()),
        None,
    )
    if body is None:
        body = ", ".join(
            f"{k}={v}"
            for k, v in value.items()
            if isinstance(v, str | int | float) and k not in _LABEL_KEYS
        )
    return (f"[{' · '.join(labels)}] " if labels else "") + " ".join(body.split())


def clean_snippet(path: str, snippet: str, hit_line: int = 0) -> list[str]:
    """Snippet lines (``N: text``) made readable: JSONL records as label + text, Markdown
    without HTML comments; the line numbers stay, so each line can be found in the file; ▶ marks the match."""
    out = []
    for raw in snippet.splitlines():
        number, sep, text = raw.partition(": ")
        if not sep or not number.isdigit():
            number, text = "", raw
        text = _jsonl_line(text) if path.endswith(".jsonl") else _COMMENT.sub("", text).rstrip()
        mark = "▶" if number and int(number) == hit_line else " "
        out.append(f"{mark}{number:>5} │ {text}" if number else text)
    return out


_COMMENT = re.compile(r"<!--.*?-->")
