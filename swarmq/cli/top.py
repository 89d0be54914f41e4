"""``swarmq top``: the figures of ``/metrics`` as one live terminal view, for an operator
without Prometheus. Every value read from the stores is printed as plain text."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

from swarmq.cli.common import load
from swarmq.cli.console import console

if TYPE_CHECKING:
    from swarmq.wiring.figures import Family


def _table(title: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> Table:
    table = Table(title=title, title_justify="left", expand=False)
    for column in columns:
        table.add_column(column, justify="left" if column == columns[0] else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    if not rows:
        table.add_row(*(Text("-") for _ in columns))
    return table


def _n(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"


def frame(families: dict[str, Family], errors: list[str]) -> Group:
    """One screen: quotas, LLM, knowledge, flywheel, missions (what /metrics exports)."""

    def f(name: str) -> Family:
        from swarmq.wiring.figures import Family

        return families.get(name) or Family(name, "gauge", "")

    quotas = [
        (
            q,
            _n(f("swarmq_quota_used").value(q)),
            _n(f("swarmq_quota_held").value(q)),
            _n(f("swarmq_quota_max").value(q)),
            _n(f("swarmq_quota_refusals").value(q)),
            f"{f('swarmq_quota_reset_seconds').value(q) / 3600:.1f} h",
        )
        for (q,), _ in f("swarmq_quota_max").samples
    ]
    llm = [
        (
            "/".join(labels),
            _n(value),
            _n(f("swarmq_llm_failures").value(*labels)),
            _n(f("swarmq_llm_rejected_replies").value(*labels)),
            _n(f("swarmq_llm_input_tokens").value(*labels)),
            _n(f("swarmq_llm_output_tokens").value(*labels)),
        )
        for labels, value in f("swarmq_llm_calls").samples
    ]
    cost = f"{f('swarmq_llm_cost_dollars').total():.4f}"
    entries: dict[str, float] = {}
    for (tier, status, _category), value in f("swarmq_knowledge_entries").samples:
        entries[f"{tier} {status}"] = entries.get(f"{tier} {status}", 0.0) + value
    injections = f("swarmq_knowledge_injections")
    knowledge = [(k, _n(v)) for k, v in sorted(entries.items())] + [
        ("injections shown", _n(injections.value("shown"))),
        ("injections silent", _n(injections.value("silent"))),
        *((f"acks {v}", _n(n)) for (v,), n in f("swarmq_knowledge_acknowledgements").samples),
        *((f"{t} {e}", _n(n)) for (t, e), n in f("swarmq_knowledge_sidecar_lines").samples),
        *(
            (f"recorded by {k}", _n(n))
            for (k,), n in f("swarmq_knowledge_recorded_lessons").samples
        ),
    ]
    flywheel = [
        ("σ", _n(f("swarmq_flywheel_sigma").value())),
        ("ρ", _n(f("swarmq_flywheel_rho").value())),
        ("δ days", _n(f("swarmq_flywheel_delta_days").value())),
        ("velocity", _n(f("swarmq_flywheel_velocity").value())),
        *((t, _n(n)) for (t,), n in f("swarmq_flywheel_artifacts").samples),
        ("forge runs", _n(f("swarmq_forge_runs").value())),
    ]
    missions = [
        *((s, _n(n)) for (s,), n in f("swarmq_missions").samples if n),
        ("reaped", _n(f("swarmq_missions_reaped").total())),
        ("dead letters", _n(f("swarmq_dead_letters").total())),
        *((f"worker {w}", "up" if n else "DOWN") for (w,), n in f("swarmq_worker_up").samples),
    ]
    parts: list[Table | Text] = [
        _table("quotas", ("quota", "used", "held", "max", "refused", "resets in"), quotas),
        _table(f"LLM (est. cost ${cost})", ("provider/model/quota/purpose", "calls", "failed",
                                            "refused", "tok in", "tok out"), llm),
        _table("knowledge", ("figure", "value"), knowledge),
        _table("flywheel", ("figure", "value"), flywheel),
        _table("missions and workers", ("figure", "value"), missions),
    ]  # fmt: skip
    if errors:
        parts.append(Text("could not read: " + ", ".join(errors), style="yellow"))
    return Group(*parts)


def top(
    ctx: typer.Context,
    interval: Annotated[float, typer.Option(min=0.2, help="Seconds between refreshes.")] = 2.0,
    once: Annotated[bool, typer.Option("--once", help="Print one frame and exit.")] = False,
) -> None:
    """A live terminal view of the swarm's figures: quotas, LLM spend, knowledge, flywheel,
    missions (what /metrics exports), for an operator without Prometheus."""
    from rich.live import Live

    from swarmq.wiring.figures import FigureReader, by_name

    roster = load(ctx)
    reader = FigureReader(roster)

    def render() -> Group:
        families: list[Family] = []
        errors: list[str] = []
        for section, read in reader.sections():
            try:
                families.extend(read())
            except Exception as exc:  # shown on screen; the other sections still refresh
                errors.append(f"{section} ({type(exc).__name__}: {exc})")
        return frame(by_name(families), errors)

    if once:
        console.print(render())
        return
    with Live(render(), console=console, refresh_per_second=4, screen=False) as live:
        try:
            while True:
                time.sleep(interval)
                live.update(render())
        except KeyboardInterrupt:
            pass
