"""The swarm across hosts: who answers Celery, what each host recorded, and stopping them all.

Each host only ever touches its own processes through pid files (``<runtime>/hosts/<host>/``).
Seeing the others goes through Celery's own inspection (every worker node answers a broadcast
ping, named ``<worker>@<host>``) plus the ``host.json`` each host's ``up``/``down`` wrote. Stopping
the others (``swarmq down --all``) goes through Celery too: a broadcast warm ``shutdown`` for the
workers and a stop flag in Redis that every beat (active or standby) obeys at its next tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from swarmq.coord import keys
from swarmq.roster.schema import Roster
from swarmq.workers import remote
from swarmq.workers.processes import host_name, host_records

if TYPE_CHECKING:
    from celery import Celery

STOP_TTL_SECONDS = 300


@dataclass
class HostStatus:
    host: str
    this_host: bool
    nodes: list[str] = field(default_factory=list)
    """Celery worker nodes on that host that answered ping."""
    recorded: list[dict[str, Any]] = field(default_factory=list)
    """The processes its last ``up``/``down`` left running (``host.json``)."""
    updated_at: str | None = None
    error: str | None = None


def beat_stop_key(swarm: str) -> str:
    """Set by ``down --all``; every beat of the swarm exits when it sees it."""
    return f"{keys.beat_lock(swarm)}:stop"


def cluster(roster: Roster, pongs: list[str]) -> list[HostStatus]:
    """Hosts by name: answering nodes grouped by ``@host``, merged with each host's record."""
    here = host_name()
    hosts: dict[str, HostStatus] = {here: HostStatus(here, True)}
    for host, record in host_records(roster).items():
        status = hosts.setdefault(host, HostStatus(host, host == here))
        processes = record.get("processes")
        status.recorded = (
            [p for p in processes if isinstance(p, dict)] if isinstance(processes, list) else []
        )
        updated = record.get("updatedAt")
        status.updated_at = str(updated) if updated else None
        status.error = str(record["error"]) if record.get("error") else None
    for node in sorted(pongs):
        host = node.split("@", 1)[1] if "@" in node else "?"
        hosts.setdefault(host, HostStatus(host, host == here)).nodes.append(node)
    return sorted(hosts.values(), key=lambda h: (not h.this_host, h.host))


def ping_all(app: Celery, timeout: float) -> list[str]:
    """Every worker node of the swarm that answers (the broker is namespaced per swarm)."""
    return [node for reply in remote.ping(app, timeout=timeout) for node in reply]


def stop_everywhere(roster: Roster, app: Celery, client: Any, timeout: float = 1.0) -> list[str]:
    """Warm-shutdown every worker node and flag every beat to exit; returns the nodes asked."""
    nodes = ping_all(app, timeout)
    if nodes:
        app.control.shutdown(destination=nodes)
    client.set(beat_stop_key(roster.swarm), host_name(), ex=STOP_TTL_SECONDS)
    return nodes
