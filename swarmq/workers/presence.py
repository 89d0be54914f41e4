"""The worker side of :mod:`swarmq.coord.presence`: renew the presence key from the main process.

Connected when the app is configured. The renewal runs on the consumer's own timer (the main
process's event loop), so it stops when that loop stalls, and on a dedicated Redis client that
pool children never share.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

from celery.signals import worker_ready, worker_shutdown

from swarmq.coord.connection import TRANSIENT, connect
from swarmq.coord.presence import REFRESH_SECONDS, announce, withdraw

log = logging.getLogger(__name__)

_state: dict[str, Any] = {}


def _renew() -> None:
    try:
        announce(_state["client"], _state["swarm"], _state["worker"], _state["node"])
    except TRANSIENT as exc:  # Redis away: the key lapses and submitters fall back to ping
        log.warning("presence: cannot renew %s (%s)", _state["node"], exc)


@worker_ready.connect
def _start(sender: Any = None, **_: Any) -> None:
    hostname = str(getattr(sender, "hostname", "") or "")
    roster_of = getattr(getattr(sender, "app", None), "swarmq_roster", None)
    if not hostname or roster_of is None:
        return
    roster = roster_of()
    _state.update(
        client=connect(roster.redis_url, timeout=1.0, check=False),
        swarm=roster.swarm,
        node=hostname,
        worker=os.environ.get("SWARMQ_WORKER_ID") or hostname.split("@", 1)[0],
    )
    _renew()
    sender.timer.call_repeatedly(REFRESH_SECONDS, _renew)


@worker_shutdown.connect
def _stop(**_: Any) -> None:
    if "client" in _state:
        with contextlib.suppress(*TRANSIENT):
            withdraw(_state["client"], _state["swarm"], _state["worker"], _state["node"])
