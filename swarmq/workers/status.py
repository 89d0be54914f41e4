"""``swarmq status``: Redis, this host's processes, Celery pings, queues, active tasks, all hosts.

This host's processes come from its own records (``<runtime>/hosts/<host>/``); the other hosts
from Celery's broadcast ping plus the ``host.json`` each wrote (:mod:`swarmq.workers.hosts`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from swarmq.coord import keys
from swarmq.coord.connection import RedisUnavailable, connect, redact
from swarmq.coord.quota import QuotaGate
from swarmq.names import DEAD_LETTER_QUEUE, JOB_FAMILIES
from swarmq.roster.schema import Roster
from swarmq.workers import embedded_redis, remote
from swarmq.workers.config import is_redis_url
from swarmq.workers.hosts import HostStatus, cluster
from swarmq.workers.keeper import read_state
from swarmq.workers.launcher import Supervisor
from swarmq.workers.processes import Kind, celery_hostname


@dataclass
class ProcessStatus:
    name: str
    kind: str
    session: str
    running: bool
    pid: int | None
    where: str
    """``tmux`` (with the socket) or ``process``."""
    celery: str = ""
    """``pong``, ``no answer`` or empty for non-workers."""
    queues: list[str] = field(default_factory=list)
    active: list[dict[str, Any]] = field(default_factory=list)
    runtime: dict[str, Any] | None = None
    """The worker's runtime.json (current mission, state, heartbeat) when it has one."""
    restarts: int = 0
    """How often its keeper restarted it after it exited on its own (:mod:`.keeper`)."""
    last_exit: str = ""
    """Its last exit as the keeper saw it (``exit 1 at <time>``), empty when it never exited."""

    def supervision(self) -> str:
        """One cell for ``status``: restarts and the last exit."""
        if not self.restarts and not self.last_exit:
            return ""
        return f"{self.restarts} (last: {self.last_exit})" if self.last_exit else str(self.restarts)


@dataclass
class SwarmStatus:
    swarm: str
    redis_url: str
    redis_up: bool
    redis_mode: str
    redis_error: str | None
    processes: list[ProcessStatus]
    queue_lengths: dict[str, int]
    quotas: list[dict[str, Any]] = field(default_factory=list)
    hosts: list[HostStatus] = field(default_factory=list)
    """Every host of the swarm: answering Celery nodes and its recorded processes."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _runtime_state(roster: Roster, worker_id: str) -> dict[str, Any] | None:
    from swarmq.profiles.runtime import read_runtime

    try:
        state = read_runtime(roster.profiles_dir, worker_id)
    except (OSError, ValueError):
        return None
    return dict(state) if state else None


def collect(roster: Roster, supervisor: Supervisor, *, timeout: float = 1.0) -> SwarmStatus:
    url = roster.redis_url
    redis_error: str | None = None
    client = None
    try:
        client = connect(url, timeout=2.0)
    except RedisUnavailable as exc:
        redis_error = str(exc)
    embedded = embedded_redis.embedded_for(roster.runtime_dir).pid() is not None
    processes: list[ProcessStatus] = []
    for spec in supervisor.known_specs():
        pid = supervisor.pid(spec)
        if spec.kind in (Kind.FLOWER, Kind.API) and pid is None:
            continue  # optional and not started: nothing to report
        where = f"tmux -L {supervisor.tmux.socket}" if supervisor.tmux is not None else "process"
        processes.append(
            ProcessStatus(spec.name, spec.kind.value, spec.session, pid is not None, pid, where)
        )
        kept = read_state(spec.keeper_state)
        if kept:
            processes[-1].restarts = int(kept.get("restarts") or 0)
            if kept.get("lastExit"):
                processes[-1].last_exit = f"{kept['lastExit']} at {kept.get('lastExitAt')}"
        if spec.kind is Kind.WORKER:
            processes[-1].runtime = _runtime_state(roster, spec.name)

    queue_lengths: dict[str, int] = {}
    pongs: list[str] = []
    if client is not None:
        workers = [p for p in processes if p.kind == Kind.WORKER.value]
        pongs = _celery_details(roster, workers, timeout)
        if is_redis_url(roster.effective_broker_url):
            names = [*JOB_FAMILIES, *(w.direct_queue for w in roster.workers), DEAD_LETTER_QUEUE]
            pipe = client.pipeline()
            for name in names:
                pipe.llen(keys.prefix(roster.swarm) + name)
            queue_lengths = dict(zip(names, (int(n) for n in pipe.execute()), strict=True))
        quotas = [
            q.as_dict()
            for q in QuotaGate(
                client, roster.swarm, roster.quotas, mirror_dir=roster.swarm_dir, url=url
            ).statuses()
        ]
        client.close()
    else:
        quotas = []
    mode = "embedded" if embedded else "external"
    return SwarmStatus(
        roster.swarm,
        redact(url),
        client is not None,
        mode,
        redis_error,
        processes,
        queue_lengths,
        quotas,
        cluster(roster, pongs),
    )


def _celery_details(roster: Roster, workers: list[ProcessStatus], timeout: float) -> list[str]:
    """Fill this host's workers from Celery; returns every node of the swarm that answered."""
    from swarmq.workers.app import create_app
    from swarmq.workers.hosts import ping_all

    app = create_app(roster)
    by_host = {celery_hostname(status.name): status for status in workers}
    for status in workers:
        status.celery = "no answer"
    try:
        pongs = ping_all(app, timeout)
        queues: dict[str, Any] = {}
        active: dict[str, Any] = {}
        mine = [node for node in by_host if node in pongs]
        if mine:
            with remote.connection(app) as conn:
                inspect = app.control.inspect(destination=mine, timeout=timeout, connection=conn)
                queues = inspect.active_queues() or {}
                active = inspect.active() or {}
    except Exception as exc:
        for status in workers:
            status.celery = f"error: {exc}"
        return []
    finally:
        app.close()
    for host, status in by_host.items():
        if host in pongs:
            status.celery = "pong"
        status.queues = [q.get("name", "") for q in queues.get(host, [])]
        status.active = [
            {"id": t.get("id"), "name": t.get("name"), "started": t.get("time_start")}
            for t in active.get(host, [])
        ]
    return pongs
