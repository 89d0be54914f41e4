"""``swarmq consolidate``: merge, supersede and link near-duplicate knowledge now.

By default the scopes run in this process (under the same store locks the workers use) with a
progress bar; ``--submit`` (alias ``--enqueue``) sends them to the workers as ``consolidation.scope`` tasks and
follows their progress state. ``--dry-run`` only plans and shows what would change.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks
from swarmq.cli.console import console, err_console, say
from swarmq.consolidation.items import Reason
from swarmq.consolidation.knowledge import ScopeReport
from swarmq.consolidation.scopes import SCOPES, check_scope
from swarmq.names import CONSOLIDATION_SCOPE
from swarmq.roster.schema import Roster
from swarmq.wiring.consolidation import roster_scopes, run_roster_scope

COLUMNS = (
    "scope",
    "entries",
    "active",
    "joined",
    *(r.value for r in Reason),
    "rounds",
    "changed",
    "seconds",
)


def _progress(quiet: bool) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        TextColumn("{task.fields[detail]}", markup=False),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
        transient=True,
    )


def _run_local(
    roster: Roster, scopes: list[str], dry_run: bool, quiet: bool, full: bool
) -> list[ScopeReport]:
    locks = store_locks(roster)
    reports: list[ScopeReport] = []
    with _progress(quiet) as progress:
        overall = progress.add_task("consolidating", total=len(scopes), detail="")
        for scope in scopes:
            progress.update(overall, description=f"{scope}", detail="planning")

            def report(stage: str, meta: dict[str, Any], scope: str = scope) -> None:
                if stage == "round":
                    progress.update(
                        overall, detail=f"round {meta['round']}: {meta['actions']} action(s)"
                    )

            reports.append(
                run_roster_scope(roster, locks, scope, dry_run=dry_run, progress=report, full=full)
            )
            progress.advance(overall)
    return reports


def _run_enqueued(
    roster: Roster, scopes: list[str], dry_run: bool, quiet: bool, full: bool
) -> list[dict[str, Any]]:
    from swarmq.tasks.consolidation import window_of
    from swarmq.workers.app import create_app

    celery = create_app(roster)
    window = window_of()
    results = {
        scope: celery.send_task(
            CONSOLIDATION_SCOPE,
            kwargs={"scope": scope, "window": window, "dry_run": dry_run, "full": full},
            queue="consolidation",
        )
        for scope in scopes
    }
    out: list[dict[str, Any]] = []
    with _progress(quiet) as progress:
        overall = progress.add_task("waiting for workers", total=len(scopes), detail="")
        pending = dict(results)
        while pending:
            for scope, result in list(pending.items()):
                if result.ready():
                    out.append({"scope": scope, **result.get(propagate=True)})
                    del pending[scope]
                    progress.advance(overall)
                elif result.state == "PROGRESS" and isinstance(result.info, dict):
                    info = result.info
                    progress.update(
                        overall,
                        description=scope,
                        detail=f"round {info.get('round', '?')}: {info.get('actions', 0)} action(s)",
                    )
            time.sleep(0.2)
    return out


def _counts_said(rows: list[dict[str, Any]], dry_run: bool) -> str:
    """The table's columns in one sentence: what each count counts."""
    actions = sum(sum(row.get("counts", {}).values()) for row in rows)
    verb = "would change" if dry_run else "changed"
    if not actions:
        return (
            "entries: lines in the scope's store; active: those compared (not archived or "
            "superseded); no near-duplicate, contradiction or complement was found, so nothing "
            + ("would change." if dry_run else "changed.")
        )
    return (
        "entries: lines in the scope's store; active: those compared (not archived or "
        "superseded); each reason column counts planned actions (a merge, a supersession or a "
        f"link) of that kind; rounds: planning passes until nothing more matched; changed: "
        f"entries the {actions} action(s) {verb}"
        + ("; nothing was written (dry run)." if dry_run else ".")
    )


def _table(rows: list[dict[str, Any]], dry_run: bool) -> Table:
    title = "consolidation plan (dry run: nothing written)" if dry_run else "consolidation"
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column.replace("_", " "), justify="left" if column == "scope" else "right")
    for row in rows:
        counts = row.get("counts", {})
        if row.get("outcome") == "already_done":
            table.add_row(row["scope"], *["" for _ in COLUMNS[1:-1]], "done today")
            continue
        table.add_row(
            row["scope"],
            str(row.get("entries", "")),
            str(row.get("active", "")),
            "all" if row.get("focus") is None else str(row["focus"]),
            *(str(counts.get(r.value, 0)) for r in Reason),
            str(row.get("rounds", "")),
            str(row.get("changed", "")),
            f"{row.get('seconds', 0):.2f}",
        )
    return table


VERB = {
    "merge": "keep the first, merge the second into it",
    "supersede": "the first supersedes the second",
    "link": "link the two as complements",
}
"""What each planned action does, said in words (a dry run writes nothing)."""

REASON_WORDS = {
    "exact_duplicate": "the same text",
    "duplicate": "near-duplicates",
    "conflict": "conflicting directives",
    "contradiction": "the newer contradicts the older",
    "complement": "they complete each other",
    "paraphrase": "the same lesson in other words",
}


def _print_actions(report: ScopeReport, limit: int) -> None:
    """The first ``limit`` planned actions, each with the whole text of both entries."""
    actions = report.plan.actions
    say(
        (f"{report.scope}: the first {min(limit, len(actions))} of {len(actions)} planned "
         "action(s)", "bold")
    )  # fmt: skip
    texts = report.plan.texts
    for number, action in enumerate(actions[:limit], 1):
        why = REASON_WORDS.get(action.reason.value, action.reason.value)
        say(
            f"{number}. ",
            (action.kind.value, "bold"),
            f" ({why}, similarity {action.similarity:.2f}): {VERB.get(action.kind.value, '')}",
        )
        for ident in (action.keep, action.other):
            say(("   " + ident + ": ", "dim"), texts.get(ident, "(text not available)"))


def consolidate(
    ctx: typer.Context,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            "-s",
            help=f"Scope(s) to consolidate: {', '.join(SCOPES)} (default: all enabled).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Plan only: show what would change.")
    ] = False,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Join the whole store, not only the entries changed since the last run.",
        ),
    ] = False,
    enqueue: Annotated[
        bool,
        typer.Option(
            "--submit",
            "--enqueue",
            help="Send the scopes to the workers instead of running them here (--submit, as elsewhere).",
        ),
    ] = False,
    show: Annotated[
        int, typer.Option(help="With --dry-run: list this many planned actions per scope.")
    ] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: bool = JsonOption,
) -> None:
    """Merge duplicates, supersede outdated or contradicted entries, link complements."""
    roster = load(ctx)
    scopes = [check_scope(s) for s in scope] if scope else roster_scopes(roster)
    if not scopes:
        fail("consolidation is disabled (consolidation.enabled: false) and no --scope was given")
    if enqueue:
        rows = _run_enqueued(roster, scopes, dry_run, quiet or as_json, full)
        reports: list[ScopeReport] = []
    else:
        reports = _run_local(roster, scopes, dry_run, quiet or as_json, full)
        rows = [r.summary() for r in reports]
    if as_json:
        if dry_run and reports:
            for row, report in zip(rows, reports, strict=True):
                row["actions"] = [
                    {
                        "action": a.kind.value,
                        "reason": a.reason.value,
                        "similarity": a.similarity,
                        "keep": a.keep,
                        "other": a.other,
                        "round": a.round,
                    }
                    for a in report.plan.actions
                ]
        emit_json(rows)
        return
    console.print(_table(rows, dry_run))
    say(_counts_said(rows, dry_run))
    if show:
        for report in reports:
            if report.plan.actions:
                _print_actions(report, show)
    elif dry_run and any(r.plan.actions for r in reports):
        say("--show N lists the first N planned actions of each scope with both entries' text")
