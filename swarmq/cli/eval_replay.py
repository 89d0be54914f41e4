"""``swarmq eval replay --history DIR --labels FILE``: replayed real histories, on their own clock.

Prints per project and per split the recurrences caught before the session, caught at the
failure and missed, those caught by an entry stating the cure (where the labels name one), the
entries injected per session and the share a label marks relevant; with ``--verbose`` every catch
(the entry that caught it, to be read by hand), every miss (the failing call and what was shown
there) and every entry shown that no label marks relevant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail
from swarmq.cli.console import console, err_console, say
from swarmq.eval.replay import ReplayFigures, Tally
from swarmq.eval.replay import replay as run_replay
from swarmq.eval.replay_labels import SPLITS, ReplayLabelsError, load_labels


def _short(session: str) -> str:
    """A session's name, short enough for a row (Codex rollouts: their start time)."""
    stem = session.removesuffix(".jsonl")
    return stem[8:27] if stem.startswith("rollout-") else stem[:12]


def _row(name: str, split: str, tally: Tally, entries: str) -> list[str]:
    return [
        name,
        split,
        str(tally.sessions),
        str(tally.recurrences),
        str(tally.before),
        str(tally.at_failure),
        str(tally.missed),
        f"{tally.caught_rate:.2f}",
        str(tally.cured),
        f"{tally.shown_per_session:.2f}",
        f"{tally.relevant}/{tally.shown}",
        f"{tally.relevant_share:.2f}" if tally.shown else "-",
        entries,
    ]


def _table(figures: ReplayFigures) -> Table:
    settings = "default settings" if not figures.settings else "NOT the defaults: --settings"
    table = Table(title=f"replayed histories ({figures.split}), {settings}, own clock")
    for column in (
        "project",
        "split",
        "sessions",
        "recurrences",
        "before",
        "at failure",
        "missed",
        "caught",
        "with cure",
        "shown/session",
        "relevant/shown",
        "relevant share",
        "store entries",
    ):
        table.add_column(column, justify="left" if column in ("project", "split") else "right")
    for project in figures.projects:
        last = project.sessions[-1].entries_after if project.sessions else 0
        table.add_row(*_row(project.project, project.split, project.tally(), str(last)))
    for split in sorted({p.split for p in figures.projects}):
        table.add_row(*_row("all", split, figures.tally(split), ""), style="bold")
    if len({p.split for p in figures.projects}) > 1:
        table.add_row(*_row("all", "all", figures.tally(), ""), style="bold")
    return table


def _sessions(figures: ReplayFigures) -> Table:
    table = Table(title="per session: entries shown (unique) and relevant, store after close loop")
    for column in (
        "project",
        "session",
        "start",
        "failures",
        "shown",
        "relevant",
        "forged",
        "promoted",
        "store",
    ):
        table.add_column(
            column, justify="left" if column in ("project", "session", "start") else "right"
        )
    for project in figures.projects:
        for s in project.sessions:
            shown = s.shown()
            table.add_row(
                project.project,
                _short(s.session),
                s.start.strftime("%Y-%m-%d %H:%M"),
                str(s.failures),
                str(len(shown)),
                str(sum(1 for i in shown.values() if i.relevant)),
                str(s.forged),
                str(s.promoted),
                str(s.entries_after),
            )
    return table


def _verbose(figures: ReplayFigures) -> None:
    console.print(_sessions(figures))
    for project in figures.projects:
        for outcome in project.recurrences:
            if outcome.status != "missed":
                cured = "with its cure" if outcome.cured != "missed" else "WITHOUT its cure"
                say(
                    ("caught", "green"),
                    f" {outcome.status} {project.project} {outcome.mistake} "
                    f"{outcome.session}:{outcome.line} by {outcome.entry} ({cured})",
                )
                say("  entry: " + (outcome.entry_text or "")[:400].replace("\n", " | "))
                continue
            say(
                ("missed", "red"),
                f" {project.project} {outcome.mistake} {outcome.session}:{outcome.line}",
            )
            say("  failure: " + outcome.failure[:240].replace("\n", " | "))
            console.print(
                f"  lesson learned (pool or store) at session start: "
                f"{'yes' if outcome.learned else 'no'}; in the knowledge store: "
                f"{'yes' if outcome.in_store else 'no'}",
                highlight=False,
            )
            for shown in outcome.shown_at_failure or ("(nothing shown at the failure)",):
                say("  shown: " + shown)
        for session, item in project.irrelevant():
            say(
                ("not relevant", "yellow"),
                f" {project.project} {_short(session)} {item.entry_id}: {item.text[:160]}",
            )


def replay(
    history: Annotated[
        Path, typer.Option("--history", help="Directory of project folders of session files.")
    ],
    labels: Annotated[
        Path, typer.Option("--labels", help="Labels YAML (eval/replay/labels.yaml).")
    ],
    split: Annotated[
        str, typer.Option("--split", help="held-apart (never tuned on), development, or all.")
    ] = "all",
    project: Annotated[
        list[str] | None, typer.Option("--project", help="Only this project (repeatable).")
    ] = None,
    work: Annotated[
        Path | None,
        typer.Option("--work", help="Keep each project's replayed workspace under this directory."),
    ] = None,
    settings: Annotated[
        Path | None,
        typer.Option(
            "--settings",
            help="Diagnosis only: a YAML of roster sections set on top of the defaults "
            "(e.g. flywheel gates); the figures are then not the product's.",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Every miss and every irrelevant entry shown.")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """Replay real multi-session histories in time order, on their own clock, with default
    settings; count the recurring mistakes the swarm's knowledge caught."""
    if split not in SPLITS:
        fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    if not history.is_dir():
        fail(f"--history {history}: no such directory")
    if work is not None and work.exists() and any(work.iterdir()):
        fail(f"--work {work}: not empty; give a new or empty directory (nothing was replayed)")
    overrides: dict[str, Any] = {}
    if settings is not None:
        try:
            loaded = yaml.safe_load(settings.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            fail(f"--settings {settings}: {exc}")
        if not isinstance(loaded, dict):
            fail(f"--settings {settings}: expected a mapping of roster sections")
        overrides = loaded
    try:
        figures = run_replay(
            history,
            load_labels(labels),
            split=split,
            projects=tuple(project or ()),
            work=work,
            settings=overrides,
            progress=None if as_json else lambda p: err_console.print(f"replaying {p}…"),
        )
    except ReplayLabelsError as exc:
        fail(str(exc))
    if as_json:
        emit_json(figures.as_dict(verbose=verbose))
        return
    console.print(_table(figures))
    if verbose:
        _verbose(figures)
