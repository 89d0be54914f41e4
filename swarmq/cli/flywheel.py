"""``swarmq flywheel close-loop|status|observations``: run the loop, see whether knowledge
compounds, and audit the probe observations the swarm will show."""

from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks
from swarmq.cli.console import cell, console, line, say
from swarmq.flywheel.config import GateRules
from swarmq.flywheel.metrics import NO_DATA, compute_metrics, read_baselines
from swarmq.flywheel.model import parse_time, rfc3339
from swarmq.flywheel.probes import FOUND, ProbeObservation, forget_probes, read_observations
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.agentops_queue import close_loop_with_queue
from swarmq.storage.jsonl import corrupt_path
from swarmq.wiring.flywheel import knowledge_sink, layout_for, observe_failure

if TYPE_CHECKING:
    from swarmq.roster.schema import Roster

app = typer.Typer(
    help="The AgentOps knowledge flywheel: close the loop, measure it.", no_args_is_help=True
)

STATUS_STYLE = {
    "COMPOUNDING": "green",
    "NEAR ESCAPE": "yellow",
    "ACCUMULATING": "yellow",
    "DECAYING": "red",
    "NO DATA": "dim",
}
CLOSE = "`swarmq flywheel close-loop` (or the scheduled forge.close_loop job)"


def _moment(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    moment = parse_time(value)
    if moment is None:
        fail(f"{option} {value!r}: not an RFC 3339 time (e.g. 2025-06-01T14:03:00Z)")
    return moment


@app.command("close-loop")
def close_loop(
    ctx: typer.Context,
    now: Annotated[
        str | None,
        typer.Option(help="The clock every gate reads (RFC 3339; default now): a replay's own."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Forge the AgentOps queue, ingest pending, apply feedback, confirm, promote, mature,
    measure (what forge.close_loop runs)."""
    roster = load(ctx)
    locks = store_locks(roster)
    result = close_loop_with_queue(
        layout_for(roster),
        locks,
        roster.forge,
        roster.flywheel,
        sink=knowledge_sink(roster, locks),
        now=_moment(now, "--now"),
    )
    data = result.as_dict()
    if as_json:
        emit_json(data)
        return
    table = Table(title="flywheel close-loop", show_header=False)
    table.add_column("step", style="bold")
    table.add_column("outcome", overflow="fold")
    queue = data["queue"]
    if queue.get("status") not in (None, "absent", "unchanged"):
        table.add_row(
            "ao queue",
            f"{queue['new']} new of {queue['candidates']} kept from {queue['snippets']} "
            f"snippet(s) in .agents/ao/pending.jsonl",
        )
    ingest = data["ingest"]
    table.add_row(
        "ingest",
        "no forged file waits to be ingested (`swarmq forge PATH` writes them)"
        if not ingest["files_scanned"]
        else f"{ingest['added']} new candidate(s) scored into the pool from "
        f"{ingest['files_scanned']} pending file(s); {ingest['skipped_existing']} were already "
        f"in the pool, {ingest.get('skipped_promoted', 0)} already promoted, "
        f"{ingest['skipped_malformed']} block(s) skipped as empty or malformed",
    )
    table.add_row(
        "feedback",
        f"{data['feedback']['rewards']} acknowledgement(s) by agents turned into reward(s) on "
        f"{data['feedback']['artifacts_updated']} learning(s)",
    )
    table.add_row(
        "promote",
        f"{len(data['promoted'])} candidate(s) promoted to learnings; "
        f"{data['rejected_discard']} rejected for a score below 0.50",
    )
    for promotion in result.promoted:
        table.add_row("", f"{_title(promotion.candidate)} → {_short(promotion.artifact_path)}")
    for sentence in held_sentences(data, roster.flywheel.gate_rules()):
        table.add_row("held", sentence)
    maturity = data["maturity"]
    table.add_row(
        "mature",
        f"{len(maturity['transitions'])} learning(s) changed maturity, {maturity['decayed']} "
        f"lost utility for going unused, {len(maturity['expired'])} expired, "
        f"{len(maturity['evicted'])} archived",
    )
    metrics = data["metrics"]
    table.add_row(
        "measure",
        f"retrieval coverage σ {metrics['sigma']:.3f}, evidence-backed use ρ "
        f"{metrics['rho']:.3f}, average learning age δ {metrics['delta']:.1f} d: "
        f"{metrics['status']} ({metrics['health']}); `swarmq flywheel status` explains each",
    )
    table.add_row("took", f"{data['seconds']:.2f} s")
    console.print(table)
    for problem in data["problems"]:
        say((str(problem), "yellow"))


def _title(candidate: dict[str, Any]) -> str:
    """A promoted candidate as a person knows it: its title, else its first line."""
    meta = candidate.get("metadata")
    title = meta.get("pending_title") if isinstance(meta, dict) else None
    if not title:
        title = next(iter(str(candidate.get("content", "")).strip().splitlines()), "")
    return str(title or candidate.get("id", "?"))


def _short(path: str) -> str:
    """``path`` relative to the working directory when it is under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


HELD_WHY = {
    "citations": (
        "not yet confirmed by use: each needs {min} confirmation(s), an agent acknowledging "
        "it (KNOWLEDGE_APPLIED) or its failure recurring in another session"
    ),
    "bronze": (
        "scored bronze (0.50-0.70): each needs {bronze} confirmations before it is promoted; "
        "`swarmq pool promote ID` promotes one you vouch for"
    ),
    "tier": "scored below every promotable tier",
    "rejected": "rejected",
    "other": "held by a promotion gate (`swarmq pool list` shows which)",
}


def held_sentences(data: dict[str, Any], rules: GateRules) -> list[str]:
    """One sentence per reason candidates stay in the pool: how many, and why, and when the
    age gate next opens (so "held" never reads as "lost")."""
    out = []
    for why, count in sorted(data["held"].items(), key=lambda kv: -kv[1]):
        if why == "age":
            sentence = (
                f"{count} candidate(s) held: younger than the {rules.promotion_age_hours:g} h "
                "promotion age and not "
                "yet confirmed by another session"
            )
            opens = parse_time(data.get("age_gate_opens_at"))
            if opens is not None:
                sentence += (
                    f"; the first comes of age at {opens:%Y-%m-%d %H:%M} UTC: run close-loop "
                    "again after that (the scheduled forge.close_loop job does)"
                )
        else:
            template = HELD_WHY.get(why, HELD_WHY["other"])
            sentence = f"{count} candidate(s) held: " + template.format(
                min=rules.min_citations, bronze=rules.bronze_min_citations
            )
        out.append(sentence)
    return out


def status_table(m: dict[str, Any]) -> Table:
    gs = m["golden_signals"]
    style = STATUS_STYLE.get(m["status"], "")
    table = Table(title="knowledge flywheel", show_header=True)
    table.add_column("measure", style="bold")
    table.add_column("value", justify="right")
    table.add_column("meaning", overflow="fold")
    rows: list[tuple[str, str | Text, str | Text]] = [
        (
            "σ retrieval coverage",
            f"{m['sigma']:.3f}",
            "distinct learnings/patterns cited in the window ÷ all",
        ),
        ("ρ decision influence", f"{m['rho']:.3f}", "share of those with evidence-backed use"),
        ("δ knowledge age", f"{m['delta']:.1f} d", "average age of learnings"),
        (
            "σ·ρ vs δ/100",
            f"{m['sigma_rho']:.3f} vs {m['escape_threshold']:.3f}",
            line(f"velocity {m['velocity']:+.3f}: ", (m["status"], style)),
        ),
        (
            "velocity trend",
            f"{gs['velocity_trend_7d']:+.4f}/{gs['velocity_trend_30d']:+.4f}",
            f"7d/30d slope: {gs['trend_verdict']}",
        ),
        (
            "citation pipeline",
            f"{gs['high_utility_citation_pct']:.0f} %",
            f"high-utility feedback, median Δu {gs['median_utility_delta']:+.3f}, applied "
            f"{gs['applied_to_retrieved_ratio'] * 100:.0f} %: {gs['pipeline_verdict']}",
        ),
        (
            "research closure",
            f"{gs['orphaned_research_pct']:.0f} %",
            f"{gs['orphaned_research_count']} orphaned research file(s): {gs['closure_verdict']}",
        ),
        (
            "reuse concentration",
            f"Gini {gs['citation_gini']:.2f}",
            f"{gs['active_pool_pct']:.0f} % of learnings cited: {gs['concentration_verdict']}",
        ),
        (
            "artifacts",
            str(m["total_artifacts"]),
            ", ".join(f"{k} {v}" for k, v in m["tier_counts"].items()),
        ),
        (
            "citations",
            str(m["citations_this_period"]),
            f"{m['unique_cited_artifacts']} distinct, {m['stale_artifacts']} stale artifact(s)",
        ),
        (
            "utility",
            f"{m['mean_utility']:.2f}",
            f"{m['high_utility_count']} high, {m['low_utility_count']} low",
        ),
        (
            "recorded lessons",
            str(sum(m["recorded_lessons"].values())),
            ", ".join(f"by {k} {v}" for k, v in m["recorded_lessons"].items())
            + " (knowledge_add over MCP, swarmq learn): live, not mined",
        ),
        (
            "probe observations",
            str(m.get("probe_observations", 0)),
            "missing paths sessions looked for and then found or showed absent: shown only at "
            "another session's failing look for the same path (`swarmq flywheel observations`)",
        ),
        (
            "health",
            cell(m["health"], STATUS_STYLE.get(m["health"], "")),
            "overall verdict of the golden signals",
        ),
    ]
    for row in rows:
        table.add_row(*row)
    return table


def no_data_cause(layout: AgentsLayout, m: dict[str, Any], rules: GateRules) -> str:
    """Why there is no learning to measure yet, and what to do: the step the user is at."""
    pending = sorted(layout.pending.glob("*.md")) if layout.pending.is_dir() else []
    waiting = int(m["tier_counts"].get("pool_pending", 0))
    if pending:
        return f"{len(pending)} forged file(s) not ingested yet: run swarmq flywheel close-loop"
    if waiting:
        return (
            f"{waiting} candidate(s) wait in the pool: a candidate is promoted once older than "
            f"{rules.promotion_age_hours:g} h and confirmed by use (or confirmed by another "
            "session); swarmq pool list shows each one's gate"
        )
    if read_baselines(layout):
        return "the transcripts forged so far held no lesson; forge more sessions"
    return "nothing forged yet: run swarmq forge PATH, then swarmq flywheel close-loop"


def notes(layout: AgentsLayout, m: dict[str, Any]) -> list[str]:
    """Why the figures are what they are, and what moves them: said, not left to guess."""
    out = []
    pending = sorted(layout.pending.glob("*.md")) if layout.pending.is_dir() else []
    if not read_baselines(layout):
        out.append(
            f"No close loop has run yet: forge only writes pending files; {CLOSE} ingests, "
            "promotes and measures them."
        )
    if pending:
        out.append(f"{len(pending)} forged file(s) wait in {layout.pending}: run {CLOSE}.")
    waiting = int(m["tier_counts"].get("pool_pending", 0))
    if m["total_artifacts"] == 0 and waiting:
        out.append(
            f"{waiting} candidate(s) wait in the pool for the promotion gates (a confirmation: an "
            "agent applying one, its failure recurring in another session; then age and tier): "
            "`swarmq pool list` shows what each waits on; `swarmq pool promote ID` promotes one "
            "you vouch for."
        )
    entries = int(m.get("knowledge_entries", 0))
    if m["total_artifacts"] == 0 and entries:
        out.append(
            f"The flywheel measures .agents/ artifacts and has none yet; the knowledge store "
            f"holds {entries} active entries (.swarm/). `swarmq lookup` and `swarmq knowledge "
            "search` answer from both, and from worker and shared memory."
        )
    if m["status"] == NO_DATA and not pending and not waiting:
        out.append("Nothing to measure yet: forge transcripts first (`swarmq forge PATH`).")
    elif m["total_artifacts"] and not m["citations_this_period"]:
        out.append(
            f"No citation in the last {m.get('window_days', '?')} day(s): σ stays 0 until a "
            "lookup or an injection shows a learning, ρ until an agent applies one."
        )
    return out


def plot(layout: AgentsLayout, current: dict[str, Any], path: Path, cause: str) -> int:
    """Draw σ·ρ, δ/100 and velocity over the baselines (plus now) into a PNG; returns points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    history = [
        b for b in read_baselines(layout) if b.get("timestamp") != current.get("timestamp")
    ] + [current]
    times = [parse_time(b.get("timestamp")) for b in history]
    points = [(t, b) for t, b in zip(times, history, strict=True) if t is not None]
    if current.get("status") == NO_DATA:
        points = [(t, b) for t, b in points if b.get("status") != NO_DATA]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    xs = [float(mdates.date2num(t)) for t, _ in points]
    if points:
        for key, label, style in (
            ("sigma_rho", "σ·ρ (evidence-backed reuse)", "-o"),
            ("velocity", "velocity σ·ρ − δ/100", "-s"),
        ):
            ax.plot(
                xs, [float(b.get(key) or 0.0) for _, b in points], style, label=label, markersize=4
            )
        ax.plot(
            xs,
            [float(b.get("delta") or 0.0) / 100 for _, b in points],
            "--",
            label="escape threshold δ/100",
        )
        ax.axhline(0.0, color="grey", linewidth=0.6)
        locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        if len(xs) == 1:  # one snapshot: an hour each side, so the ticks are real times
            ax.set_xlim(xs[0] - 1 / 24, xs[0] + 1 / 24)
        ax.legend(loc="best")
    else:
        ax.text(
            0.5,
            0.5,
            "no learning to measure yet:\n" + textwrap.fill(cause, 60),
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=12,
            color="grey",
        )
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_xlabel("snapshot time (UTC)")
    ax.set_ylabel("σ·ρ, δ/100 and velocity")
    ax.set_title(
        f"knowledge flywheel: {current['status']} ({current['health']}), {len(points)} snapshot(s)"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return len(points)


@app.command("observe-failure")
def observe_failure_cmd(
    ctx: typer.Context,
    error: Annotated[str, typer.Option(help="The failing call and its error text.")],
    session_id: Annotated[str, typer.Option(help="The session the call failed in.")],
    at: Annotated[str | None, typer.Option(help="When it failed (RFC 3339; default now).")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Note a failing call of a session: the next close loop confirms the lessons of that
    failure learned in other sessions. Prints nothing when the text holds no failure."""
    roster = load(ctx)
    seen = observe_failure(
        roster, store_locks(roster), error, session_id=session_id, when=_moment(at, "--at")
    )
    if as_json:
        emit_json(seen.as_dict() if seen else None)
    elif seen is not None:
        console.print(f"{seen.signature} (session {seen.session_id})", highlight=False)


def recorded_lessons(roster: Roster) -> tuple[dict[str, int], int]:
    """Live swarm-tier lessons recorded on purpose, by agents and by people, and how many
    active entries the swarm tier holds in all."""
    from swarmq.knowledge.recorded import recorded_counts
    from swarmq.wiring.knowledge import knowledge_store

    store = knowledge_store(roster, store_locks(roster))
    entries = store.swarm.read().entries
    return recorded_counts(entries), sum(1 for e in entries if e.is_active)


@app.command()
def status(
    ctx: typer.Context,
    days: Annotated[
        int | None, typer.Option(min=1, max=365, help="Window (default flywheel.metrics_days).")
    ] = None,
    plot_file: Annotated[
        Path | None, typer.Option("--plot", help="Also draw the trend into this PNG.")
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """σ, ρ, δ, escape velocity and the golden signals (reads only; close-loop keeps baselines)."""
    roster = load(ctx)
    layout = layout_for(roster)
    metrics = compute_metrics(
        layout, days=days or roster.flywheel.metrics_days, stale_days=roster.flywheel.stale_days
    )
    metrics["window_days"] = days or roster.flywheel.metrics_days
    metrics["recorded_lessons"], metrics["knowledge_entries"] = recorded_lessons(roster)
    probes = read_observations(layout)
    metrics["probe_observations"] = len(probes.items)
    said = notes(layout, metrics)
    said += [f"{problem} (`swarmq flywheel observations`)" for problem in probes.problems]
    drawn = None
    if plot_file is not None:
        if plot_file.suffix.lower() != ".png":
            fail(f"{plot_file}: --plot writes a PNG; give a file name ending in .png")
        cause = no_data_cause(layout, metrics, roster.flywheel.gate_rules())
        drawn = plot(layout, metrics, plot_file, cause)
    if as_json:
        emit_json(
            {
                **metrics,
                "notes": said,
                **({"plot": {"path": str(plot_file), "points": drawn}} if plot_file else {}),
            }
        )
        return
    console.print(status_table(metrics))
    for note in said:
        say(("note:", "yellow"), " ", note)
    if plot_file is not None:
        console.print(
            f"trend of {drawn} point(s) drawn to {plot_file}"
            + (f" (no learning to measure yet: {cause})" if not drawn else ""),
            style="dim",
        )


def _found(item: ProbeObservation) -> str:
    """What the session found instead: the path, or "absent" and the listing that showed it."""
    return item.found if item.resolution == FOUND else f"absent ({item.found})"


@app.command()
def observations(
    ctx: typer.Context,
    forget: Annotated[
        list[str] | None,
        typer.Option(
            "--forget",
            metavar="ID|PATH",
            help="Remove this observation (its id), or every observation of this missing path; "
            "repeatable. Nothing is removed when one names none.",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="Most rows.")] = 50,
    as_json: bool = JsonOption,
) -> None:
    """Probe observations, newest first: paths a session looked for where they are not, and
    what it found instead; the swarm shows one only at another session's failing look for the
    same path (never at a session's start, never promoted)."""
    roster = load(ctx)
    layout = layout_for(roster)
    project = str(layout.root.parent)
    if forget:
        _forget(roster, layout, forget, as_json)
        return
    read = read_observations(layout)
    items = sorted(read.items, key=lambda o: rfc3339(o.observed_at) if o.observed_at else "")
    items.reverse()
    shown = items[:limit]
    if as_json:
        emit_json(
            {
                "project": project,
                "file": str(layout.probes),
                "total": len(items),
                "observations": [{"project": project, **o.as_dict()} for o in shown],
                "problems": read.problems,
            }
        )
        return
    table = Table(title=f"probe observations of {project} ({len(items)})")
    for column in ("id", "missing", "found instead", "session", "observed", "call"):
        table.add_column(column, overflow="fold")
    for o in shown:
        table.add_row(
            o.id,
            o.missing,
            cell(_found(o), "" if o.resolution == FOUND else "dim"),
            o.session_id,
            f"{o.observed_at:%Y-%m-%d %H:%M}" if o.observed_at else "?",
            o.call,
        )
    console.print(table)
    if not items:
        console.print(
            f"no observation in {layout.probes}: `swarmq forge PATH` records the failed looks "
            "at missing paths a session then resolved",
            style="dim",
        )
    elif len(items) > len(shown):
        console.print(f"{len(items) - len(shown)} older one(s) not shown (--limit)", style="dim")
    for problem in read.problems:
        say((problem, "yellow"))


def _forget(roster: Roster, layout: AgentsLayout, names: list[str], as_json: bool) -> None:
    blank = [n for n in names if not n.strip()]
    if blank:
        fail("--forget '': give an observation id or a missing path; nothing was forgotten")
    done = forget_probes(layout, store_locks(roster), names)
    if done.unmatched:
        where = layout.probes if layout.probes.exists() else f"{layout.probes} (no such file)"
        fail(
            f"--forget {', '.join(repr(n) for n in done.unmatched)}: no observation has that id "
            f"or missing path in {where}; `swarmq flywheel observations` lists them; nothing "
            "was forgotten"
        )
    if as_json:
        emit_json(
            {
                "file": str(layout.probes),
                "forgotten": [o.as_dict() for o in done.removed],
                "quarantined": done.quarantined,
            }
        )
        return
    say(f"forgot {len(done.removed)} observation(s) in {layout.probes}:")
    for o in done.removed:
        say(f"  {o.id}  {o.missing} → {_found(o)}  (session {o.session_id})")
    if done.quarantined:
        say(
            (
                f"{done.quarantined} damaged line(s) moved to "
                f"{corrupt_path(layout.probes)} by the rewrite",
                "yellow",
            )
        )
