"""What ``swarmq up`` checks before it starts anything: a failure found here leaves nothing
running, where the same failure found by a started worker would leave it retrying in its log.

Two things a worker cannot fix by itself: a broker that does not answer (RabbitMQ named in
``broker_url`` but not running), and a workspace whose recorded lock mode is not the cluster
mode workers hold.
"""

from __future__ import annotations

from swarmq.coord.connection import redact
from swarmq.coord.lockmode import check_lock_mode
from swarmq.roster.schema import Roster
from swarmq.storage.locking import LockError

BROKER_TIMEOUT = 3.0
"""Seconds the broker may take to accept a connection (``up`` fails well within 10 s)."""


def broker_problem(roster: Roster, timeout: float = BROKER_TIMEOUT) -> str | None:
    """Why the roster's own broker (``broker_url``, when it is not ``redis_url``, which ``up``
    starts itself) refuses a connection, in its own words; ``None`` when it answers."""
    url = roster.broker_url
    if not url or url == roster.redis_url:
        return None
    from kombu.connection import Connection

    connection = Connection(url, connect_timeout=timeout)
    try:
        connection.ensure_connection(max_retries=0, timeout=timeout)  # one try, no back-off
    except Exception as exc:  # any transport's error: the broker's own words are the point
        return (
            f"the broker at {redact(url)} (broker_url in swarm.yaml) does not answer: "
            f"{type(exc).__name__}: {exc}; start it, or remove broker_url to use Redis as the "
            "broker; nothing was started"
        )
    finally:
        connection.release()
    return None


def lock_mode_problem(roster: Roster) -> str | None:
    """Why workers could not write this roster's workspace, naming the command that fixes it."""
    if roster.locks != "cluster":
        return (
            "the roster says locks: single-host, but workers hold cluster (Redis) locks: set "
            "`locks: cluster` in swarm.yaml, then run `swarmq workspace set-locks cluster`; "
            "nothing was started"
        )
    try:
        check_lock_mode(roster.cluster_config())
    except LockError as exc:
        return f"{exc}; nothing was started"
    return None
