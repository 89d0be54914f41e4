"""``swarmq pool list|show|promote|reject``: review the AgentOps candidate pool."""

from __future__ import annotations

import getpass
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, load, store_locks
from swarmq.cli.console import cell, console, say
from swarmq.flywheel.bridge import confirm_provisional
from swarmq.flywheel.citations import citation_stats, pool_key
from swarmq.flywheel.closeloop import promote_candidate, reject_candidate
from swarmq.flywheel.content import canonical_content_body
from swarmq.flywheel.model import PoolStatus, QualityTier
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.promotion import gate_for
from swarmq.wiring.flywheel import knowledge_sink, layout_for

app = typer.Typer(
    help="The scored candidate pool (.agents/pool, AgentOps format).", no_args_is_help=True
)


@app.command("list")
def list_(
    ctx: typer.Context,
    status: Annotated[PoolStatus | None, typer.Option(help="Only this status.")] = None,
    tier: Annotated[QualityTier | None, typer.Option(help="Only this tier.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Most rows.")] = 50,
    as_json: bool = JsonOption,
) -> None:
    """Candidates, newest first, with the gate each is waiting on."""
    roster = load(ctx)
    layout = layout_for(roster)
    pool = Pool(layout)
    now = datetime.now(UTC)
    stats = citation_stats(layout)
    rows = []
    for entry in pool.entries(status):
        if tier is not None and entry.tier != tier:
            continue
        cited = stats.useful(pool_key(entry.id))
        gate = gate_for(entry, stats, now, roster.flywheel.gate_rules())
        rows.append(
            {**entry.summary(now), "citations": cited, "gate": gate.reason, "eligible": gate.passed}
        )
    rows.sort(key=lambda r: str(r["added_at"] or ""), reverse=True)
    total = len(rows)
    rows = rows[:limit]
    if as_json:
        emit_json({"total": total, "entries": rows, "problems": pool.problems})
        return
    table = Table(title=f"pool ({total} candidate(s))")
    for column in ("id", "status", "tier", "type", "score", "age h", "cites", "gate", "title"):
        table.add_column(
            column, overflow="fold" if column in ("title", "gate", "id") else "ellipsis"
        )
    for r in rows:
        table.add_row(
            str(r["id"]),
            str(r["status"]),
            str(r["tier"]),
            str(r["type"]),
            f"{r['raw_score']:.2f}",
            f"{r['age_hours']:.0f}",
            str(r["citations"]),
            cell(r["gate"], "green" if r["eligible"] else ""),
            str(r["title"]),
        )
    console.print(table)
    if not total:
        console.print(
            "the pool is empty: `swarmq forge PATH` mines transcripts, then "
            "`swarmq flywheel close-loop` scores what was mined into the pool",
            style="dim",
        )
    for problem in pool.problems:
        say((str(problem), "yellow"))


@app.command()
def show(ctx: typer.Context, candidate_id: str, as_json: bool = JsonOption) -> None:
    """One candidate in full: score, rubric, source span, review."""
    roster = load(ctx)
    entry = Pool(layout_for(roster)).require(candidate_id)
    if as_json:
        emit_json({"status": entry.status.value, "path": str(entry.path), **entry.data})
        return
    cand = entry.candidate
    table = Table(title=entry.id, show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value", overflow="fold")
    scoring = entry.data.get("scoring_result") or {}
    for key, value in (
        ("status", entry.status.value),
        ("type", entry.type),
        ("tier", entry.tier),
        ("raw score", f"{entry.raw_score:.4f}"),
        ("rubric", scoring.get("rubric")),
        ("added", entry.data.get("added_at")),
        ("source", cand.get("source")),
        ("metadata", cand.get("metadata")),
        ("review", entry.human_review),
        ("utility", cand.get("utility")),
        ("path", entry.path),
    ):
        table.add_row(key, str(value))
    console.print(table)
    console.print(canonical_content_body(entry.content))


@app.command()
def promote(
    ctx: typer.Context,
    candidate_id: str,
    force: Annotated[bool, typer.Option(help="Skip the age, citation and tier gates.")] = False,
    as_json: bool = JsonOption,
) -> None:
    """Graduate a candidate to .agents/learnings (or patterns for decisions) now."""
    roster = load(ctx)
    locks = store_locks(roster)
    layout = layout_for(roster)
    entry = Pool(layout).require(candidate_id)
    done = promote_candidate(layout, locks, candidate_id, roster.flywheel, force=force)
    out: dict[str, Any] = done.as_dict()
    sink = knowledge_sink(roster, locks)
    if sink is not None and not done.deduplicated:
        out["knowledge"] = confirm_provisional(
            sink,
            done.artifact_path,
            entry.candidate,
            validation_mode=roster.flywheel.knowledge_bridge_validation.value,
        ).as_dict()
    if as_json:
        emit_json(out)
        return
    verb = "already known as" if done.deduplicated else "promoted to"
    console.print(f"{candidate_id} {verb} {done.artifact_path}", highlight=False)
    if "knowledge" in out:
        console.print(f"knowledge store: {out['knowledge']['outcome']}", style="dim")


@app.command()
def reject(
    ctx: typer.Context,
    candidate_id: str,
    reason: Annotated[
        str, typer.Option(help="Why (kept with the candidate, at most 1000 characters).")
    ],
    reviewer: Annotated[
        str | None, typer.Option(help="Who rejects it (default: your user name).")
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Move a candidate to pool/rejected (kept for audit)."""
    roster = load(ctx)
    path = reject_candidate(
        layout_for(roster),
        store_locks(roster),
        candidate_id,
        reason,
        reviewer=reviewer or getpass.getuser(),
    )
    if as_json:
        emit_json({"candidate_id": candidate_id, "status": "rejected", "path": path})
    else:
        console.print(f"{candidate_id} rejected → {path}", highlight=False)
