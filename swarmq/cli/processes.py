"""``swarmq up``, ``down`` and ``status``: the processes one machine runs for a swarm."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from swarmq.cli.common import JsonOption, emit_json, fail, load, state
from swarmq.cli.console import cell, console, err_console, notice, say, warning
from swarmq.cli.quota import quota_table
from swarmq.roster.schema import Roster
from swarmq.workers.launcher import Action, Supervisor
from swarmq.workers.processes import celery_hostname, flower_url


def _supervisor(ctx: typer.Context, roster: Roster, no_tmux: bool = False) -> Supervisor:
    def notify(message: str) -> None:
        notice(message)

    return Supervisor(
        roster, state(ctx).config_path, use_tmux=False if no_tmux else None, notify=notify
    )


def _prepare_profiles(roster: Roster) -> None:
    """Create missing profile memory (IDENTITY/SOUL/MEMORY) without touching human edits."""
    from swarmq.cli.common import store_locks
    from swarmq.storage.locking import LockError
    from swarmq.wiring.profiles import ensure_roster_profiles

    try:  # the workspace's own lock discipline, never same-host locks by default
        ensure_roster_profiles(roster, store_locks(roster))
    except LockError as exc:
        warning(f"profile memory not prepared: {exc}")


def _wait_for_workers(roster: Roster, timeout: float) -> dict[str, bool]:
    from swarmq.workers import remote
    from swarmq.workers.app import create_app

    app = create_app(roster)
    hosts = {celery_hostname(w.id): w.id for w in roster.workers}
    answered: dict[str, bool] = dict.fromkeys(hosts.values(), False)
    deadline = time.monotonic() + timeout
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        bar = progress.add_task("waiting for workers to answer ping", total=len(hosts))
        while time.monotonic() < deadline and not all(answered.values()):
            missing = [h for h, wid in hosts.items() if not answered[wid]]
            # A ping waits at most what is left of --wait: a reply after the deadline is
            # not an answer within it.
            left = deadline - time.monotonic()
            try:
                replies = remote.ping(app, destination=missing, timeout=min(1.0, max(left, 0.05)))
            except Exception:
                replies = []
                time.sleep(0.5)
            for reply in replies:
                for host in reply:
                    if host in hosts:
                        answered[hosts[host]] = True
            progress.update(bar, completed=sum(answered.values()))
    app.close()
    return answered


def up(
    ctx: typer.Context,
    flower: bool = typer.Option(False, "--flower", help="Also run Flower on 127.0.0.1."),
    api: bool = typer.Option(False, "--api", help="Also run the memory HTTP API."),
    metrics: bool = typer.Option(
        False, "--metrics", help="Also run the Prometheus exporter (swarmq metrics)."
    ),
    no_tmux: bool = typer.Option(
        False, "--no-tmux", help="Run plain background processes even if tmux exists."
    ),
    wait: float = typer.Option(
        60.0, help="Seconds to wait for every worker to answer ping (0: don't wait)."
    ),
    restart_timeout: float = typer.Option(
        60.0, help="Seconds a changed worker may finish its task before it is killed and restarted."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Start Redis (embedded if none answers), one worker per roster entry, one beat; idempotent.

    A running process whose roster entry changed since it started is restarted (and said so)."""
    roster = load(ctx)
    from swarmq.workers.app import unregistered_schedule

    missing = unregistered_schedule(roster)
    if missing:
        names = ", ".join(f"{entry} → {task!r}" for entry, task, _ in missing)
        fail(
            f"schedule names tasks no module registers ({names}); run `swarmq roster validate`; nothing was started"
        )
    from swarmq.roster.agents import agent_problems

    agents = agent_problems(roster, state(ctx).config_path)
    for problem in agents:
        warning(f"{problem.path}: {problem.message}")
    from swarmq.workers.preflight import broker_problem, lock_mode_problem

    refusal = lock_mode_problem(roster) or broker_problem(roster)
    if refusal:  # found before anything starts, so nothing is left running
        fail(refusal)
    if flower and not os.environ.get("FLOWER_BASIC_AUTH"):
        notice(
            f"Flower at {flower_url(roster)} has no login: anyone on this "
            "machine can see and revoke tasks; set FLOWER_BASIC_AUTH=user:pass before "
            "`swarmq up --flower` to require one"
        )
    supervisor = _supervisor(ctx, roster, no_tmux)
    result = supervisor.up(flower=flower, api=api, metrics=metrics, restart_timeout=restart_timeout)
    try:
        _prepare_profiles(roster)
        answered = _wait_for_workers(roster, wait) if wait > 0 else {}
    except BaseException:  # an error or Ctrl-C before the workers answered: undo, then say it
        supervisor.undo(result)
        raise
    if answered and not all(answered.values()):
        undone = supervisor.undo(result)  # a failed `up` stops what it started
        silent = [k for k, v in answered.items() if not v]
        stopped = ", ".join(a.name for a in undone) or "nothing"
        causes = "".join(
            f"; {spec.name}'s log ends with: {line}"
            for spec in supervisor.specs()
            if spec.name in silent and (line := _last_error(spec.logfile))
        )
        fail(
            f"worker(s) not answering after {wait:g}s: {', '.join(silent)}{causes}; see "
            f"{roster.runtime_dir / 'logs'}; stopped what this `up` started: {stopped}"
        )
    if as_json:
        emit_json(
            {
                "redis": result.redis,
                "actions": [a.__dict__ for a in result.actions],
                "answered": answered,
                "warnings": [p.as_dict() for p in agents],
                **({"flower_url": flower_url(roster)} if flower else {}),
            }
        )
    else:
        table = Table(title=f"swarmq up: swarm {roster.swarm} (redis: {result.redis})")
        for column in ("process", "kind", "outcome", "detail", "ping"):
            table.add_column(column)
        for action in result.actions:
            ping = "" if action.kind != "worker" else ("pong" if answered.get(action.name) else "-")
            style = {"started": "green", "restarted": "yellow"}.get(action.outcome, "")
            table.add_row(
                action.name,
                action.kind,
                cell(action.outcome, style),
                action.detail,
                ping,
            )
        console.print(table)
        if supervisor.tmux is not None:
            console.print(f"attach: tmux -L {supervisor.tmux.socket} attach -t swarm-<workerId>")
        if flower:
            say(f"Flower: {flower_url(roster)}")


def _last_error(log: Path) -> str | None:
    """The last line of ``log`` that reports an error, for a worker that never answered."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - 16_384))
            tail = handle.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(tail):
        if "ERROR" in line or "Error" in line or "Cannot connect" in line:
            return line.strip()[:300]
    return None


def reload(
    ctx: typer.Context,
    timeout: float = typer.Option(
        60.0, help="Seconds a worker may finish its current task before it is killed."
    ),
    force: bool = typer.Option(False, "--force", help="Restart every running process."),
    no_tmux: bool = typer.Option(False, "--no-tmux", hidden=True),
    as_json: bool = JsonOption,
) -> None:
    """Restart exactly the running processes whose swarm.yaml entry changed since they started."""
    roster = load(ctx)
    actions = _supervisor(ctx, roster, no_tmux).reload(timeout=timeout, force=force)
    restarted = {a.name for a in actions if a.kind == "worker" and a.outcome == "restarted"}
    answered: dict[str, bool] = {}
    if restarted:  # say when the restarted workers are back, as `up` does
        subset = roster.model_copy(
            update={"workers": [w for w in roster.workers if w.id in restarted]}
        )
        answered = _wait_for_workers(subset, 60.0)
    if as_json:
        emit_json({"actions": [a.__dict__ for a in actions], "answered": answered})
        return
    table = Table(title=f"swarmq reload: swarm {roster.swarm}")
    for column in ("process", "kind", "outcome", "detail"):
        table.add_column(column, overflow="fold")
    for action in actions:
        table.add_row(action.name, action.kind, action.outcome, action.detail)
    console.print(table)
    silent = sorted(k for k, v in answered.items() if not v)
    if silent:
        fail(
            f"restarted worker(s) not answering after 60s: {', '.join(silent)}; see {roster.runtime_dir / 'logs'}"
        )


def down(
    ctx: typer.Context,
    timeout: float = typer.Option(
        60.0, help="Seconds to let workers finish their tasks before killing them."
    ),
    keep_redis: bool = typer.Option(False, "--keep-redis", help="Leave an embedded Redis running."),
    all_hosts: bool = typer.Option(
        False,
        "--all",
        help="Also every other host: Celery warm shutdown of its workers, its beat told to exit.",
    ),
    no_tmux: bool = typer.Option(False, "--no-tmux", hidden=True),
    as_json: bool = JsonOption,
) -> None:
    """Stop this host's workers gracefully (SIGTERM, wait, then remove the session), beat, Flower, embedded Redis."""
    roster = load(ctx)
    elsewhere = _down_elsewhere(roster) if all_hosts else []
    actions = (
        _supervisor(ctx, roster, no_tmux).down(timeout=timeout, keep_redis=keep_redis) + elsewhere
    )
    if as_json:
        emit_json({"actions": [a.__dict__ for a in actions]})
        return
    if not actions:
        console.print("nothing was running")
        return
    table = Table(title=f"swarmq down: swarm {roster.swarm}")
    for column in ("process", "kind", "outcome", "detail"):
        table.add_column(column)
    for action in actions:
        table.add_row(action.name, action.kind, action.outcome, action.detail)
    console.print(table)


def _down_elsewhere(roster: Roster) -> list[Action]:
    """``down --all``: what the other hosts run, stopped through Celery and a Redis flag."""
    from swarmq.coord.connection import RedisUnavailable, connect
    from swarmq.workers.app import create_app
    from swarmq.workers.hosts import stop_everywhere

    try:
        client = connect(roster.redis_url, timeout=2.0)
    except RedisUnavailable as exc:
        fail(f"down --all needs Redis to reach the other hosts: {exc}")
    app = create_app(roster)
    try:
        nodes = stop_everywhere(roster, app, client)
    finally:
        app.close()
        client.close()
    return [Action(node, "worker", "asked to stop", "Celery warm shutdown") for node in nodes] + [
        Action("beat", "beat", "asked to stop", "every host's beat exits at its next tick")
    ]


def status(
    ctx: typer.Context,
    no_tmux: bool = typer.Option(False, "--no-tmux", hidden=True),
    as_json: bool = JsonOption,
) -> None:
    """Redis, each worker's session, its Celery ping, queues, active tasks and current mission."""
    from swarmq.workers.status import collect

    roster = load(ctx)
    report = collect(roster, _supervisor(ctx, roster, no_tmux))
    if as_json:
        emit_json(report.as_dict())
        return
    redis_state: list[str | tuple[str, str]] = (
        [("up", "green"), f" ({report.redis_mode})"]
        if report.redis_up
        else [("down", "red"), f": {report.redis_error}"]
    )
    say("swarm ", (report.swarm, "bold"), f" · redis {report.redis_url}: ", *redis_state)
    table = Table(title="processes")
    columns = ("process", "kind", "running", "pid", "celery", "queues", "active", "mission")
    for column in (*columns, "restarts"):
        table.add_column(column)
    for p in report.processes:
        mission = _mission_cell(p.runtime)
        table.add_row(
            p.name,
            p.kind,
            cell("yes", "green") if p.running else cell("no", "red"),
            str(p.pid or ""),
            p.celery,
            ", ".join(p.queues),
            ", ".join(str(t.get("name")) for t in p.active) or "",
            mission,
            Text(p.supervision()),
        )
    console.print(table)
    if report.hosts:
        hosts = Table(title="hosts (Celery ping + each host's record)")
        for column in ("host", "answering nodes", "recorded processes", "recorded at"):
            hosts.add_column(column)
        for h in report.hosts:
            recorded = ", ".join(f"{p.get('name')} ({p.get('pid')})" for p in h.recorded)
            hosts.add_row(
                h.host + (" (this host)" if h.this_host else ""),
                ", ".join(h.nodes) or "-",
                h.error or recorded or "-",
                h.updated_at or "-",
            )
        console.print(hosts)
    if report.queue_lengths:
        queues = Table(title="queued messages")
        queues.add_column("queue")
        queues.add_column("waiting", justify="right")
        for name, length in report.queue_lengths.items():
            queues.add_row(name, str(length))
        console.print(queues)
    if report.quotas:
        console.print(quota_table(report.swarm, report.quotas))


def _mission_cell(runtime: dict[str, Any] | None) -> str:
    if not runtime:
        return ""
    mission = runtime.get("currentMissionId") or "-"
    return f"{mission} ({runtime.get('state', '?')})"
