"""``swarmq forge PATH…`` and ``swarmq lookup QUERY``: into the flywheel and back out of it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks
from swarmq.cli.console import console, err_console, say
from swarmq.flywheel.sessions import session_transcripts
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import ForgeResult
from swarmq.roster.schema import Roster
from swarmq.storage.locking import StoreLocks
from swarmq.transcripts.detect import TranscriptFormatError
from swarmq.wiring.flywheel import forge_completer, layout_for
from swarmq.wiring.llm import CompleterChoice


def _completer(roster: Roster) -> CompleterChoice:
    if not roster.forge.llm.enabled:
        return CompleterChoice(None, "disabled")
    from swarmq.coord.cluster import Cluster
    from swarmq.coord.connection import RedisUnavailable

    try:
        cluster = Cluster.connect(roster.cluster_config(), timeout=1.0)
    except RedisUnavailable as exc:
        return CompleterChoice(None, f"{exc}: the quota gate fails closed")
    return forge_completer(roster, cluster, task_id=None)


def _forge_all(
    roster: Roster,
    locks: StoreLocks,
    paths: list[Path],
    fmt: str | None,
    key: str | None,
    force: bool,
    quiet: bool,
) -> tuple[list[ForgeResult], list[dict[str, str]]]:
    layout = layout_for(roster)
    choice = _completer(roster)
    results: list[ForgeResult] = []
    failures: list[dict[str, str]] = []
    total = sum(p.stat().st_size for p in paths)
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns, console=err_console, disable=quiet, transient=True) as progress:
            task = progress.add_task("forging", total=total)
            done = 0
            for path in paths:
                progress.update(task, description=f"forging {path.name}")
                base = done

                def advance(read: int, base: int = base) -> None:
                    progress.update(task, completed=base + read)

                try:
                    results.append(
                        forge_transcript(
                            path,
                            layout,
                            locks,
                            roster.forge,
                            fmt=fmt,
                            key=key if len(paths) == 1 else None,
                            completer=choice.completer,
                            progress=advance,
                            force=force,
                        )
                    )
                except (TranscriptFormatError, OSError, ValueError) as exc:
                    failures.append({"transcript": str(path), "error": str(exc)})
                done = base + path.stat().st_size
                progress.update(task, completed=done)
    finally:
        if choice.completer is not None:
            choice.completer.close()
    return results, failures


TRANSCRIPT_SUFFIXES = frozenset({".jsonl", ".md", ".txt"})


def expand(paths: list[Path]) -> list[Path]:
    """Files as given; directories walked for ``*.jsonl``, ``*.md``, ``*.txt`` (sorted, once each)."""
    out: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                if found.is_file() and found.suffix in TRANSCRIPT_SUFFIXES:
                    out[found.resolve()] = None
        else:
            out[path.resolve()] = None
    return list(out)


def forge(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Transcript files or directories of them (Claude Code, Codex, Markdown)."
        ),
    ] = None,
    sessions: Annotated[
        bool,
        typer.Option(
            "--sessions",
            help="Also forge every transcript the AgentOps session files (.agents/ao) name.",
        ),
    ] = False,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="claude-code, codex-rollout, codex-history or markdown (default: detected).",
        ),
    ] = None,
    key: Annotated[
        str | None, typer.Option(help="Idempotency key (e.g. a mission id) for one file.")
    ] = None,
    force: Annotated[
        bool, typer.Option(help="Read the files even if the ledger says they are unchanged.")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Mine transcripts for decisions, solutions, learnings, failures and references."""
    roster = load(ctx)
    paths = paths or []
    if not paths and not sessions:
        fail("name transcript files or directories, or pass --sessions")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"no such transcript file or directory: {', '.join(missing)}")
    files = expand(paths)
    if sessions:
        files += [f for f in session_transcripts(layout_for(roster)) if f not in files]
    if not files:
        where = ", ".join(map(str, paths)) or "the AgentOps session files"
        fail(f"no transcripts ({', '.join(sorted(TRANSCRIPT_SUFFIXES))}) under {where}")
    results, failures = _forge_all(roster, store_locks(roster), files, fmt, key, force, as_json)
    if as_json:
        emit_json({"results": [r.as_dict() for r in results], "failures": failures})
    else:
        table = Table(title="forge")
        table.add_column("transcript", overflow="fold")
        table.add_column("format", overflow="fold")
        table.add_column("status", no_wrap=True)
        for column in ("messages", "candidates", "new", "dup", "malformed", "unknown"):
            table.add_column(column, justify="right")
        empty = [r for r in results if r.status == "empty"]
        for r in results:
            if r.status == "empty":
                continue  # counted in one line below, not a row each
            report: dict[str, Any] = r.report
            table.add_row(
                Path(r.transcript).name,
                r.format or "-",
                r.status,
                str(r.messages),
                str(r.candidates),
                str(r.new),
                str(r.duplicates),
                str(report.get("malformed", 0)),
                str(sum(report.get("unknown_types", {}).values())),
            )
        if table.rows:
            console.print(table)
        if empty:
            console.print(f"{len(empty)} empty transcript(s): nothing to forge", style="dim")
        for r in results:
            if r.pending_file:
                say((f"{r.new} new candidate(s)", "green"), f" → {r.pending_file}")
        if any(r.pending_file for r in results):
            console.print(
                "pending until a close loop ingests them: swarmq flywheel close-loop", style="dim"
            )
        for r in results:
            if r.report.get("truncated_last_line"):
                say(
                    (
                        f"{Path(r.transcript).name}: last line truncated (reported, skipped)",
                        "yellow",
                    )
                )
        for sentence in statuses_said(results):
            console.print(sentence, style="dim")
        for failure in failures:
            say((f"{failure['transcript']}: {failure['error']}", "red"), stderr=True)
    if failures:
        raise typer.Exit(1)


STATUS_SAID = {
    "no-lessons": (
        "{n} transcript(s) held no lesson: no decision, fix, failure or finding was stated "
        "in them (short or routine sessions often hold none)"
    ),
    "nothing-new": (
        "{n} transcript(s) held only lessons forged before (counted under dup); nothing was "
        "added twice"
    ),
    "unchanged": (
        "{n} transcript(s) unchanged since they were last forged, so not read again "
        "(--force reads them anyway)"
    ),
}
"""What each status but ``forged`` means, said once under the table."""


def statuses_said(results: list[ForgeResult]) -> list[str]:
    """One sentence per status that added nothing: why a transcript gave nothing new."""
    counts = Counter(r.status for r in results)
    return [template.format(n=counts[s]) for s, template in STATUS_SAID.items() if counts[s]]
