"""Exactly one beat per swarm: the scheduler holds a Redis lease while it runs.

Two beats would enqueue every nightly job twice. ``swarmq up`` starts one beat per machine it
runs on, so with several machines the lease is what keeps the second beat idle: it refuses to
start, saying who holds the lease.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from typing import Any

from celery.beat import PersistentScheduler

from swarmq.coord import keys
from swarmq.coord.cluster import current
from swarmq.coord.connection import TRANSIENT

log = logging.getLogger(__name__)

LEASE_SECONDS = 60


class BeatAlreadyRunning(SystemExit):
    pass


class SingleBeatScheduler(PersistentScheduler):  # type: ignore[misc]
    """A PersistentScheduler that runs only while it holds the swarm's beat lease."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held = False
        super().__init__(*args, **kwargs)

    def _lease_key(self) -> str:
        return keys.beat_lock(self.app.swarmq_roster().swarm)

    def _client(self) -> Any:
        return current(self.app.swarmq_roster()).client

    def setup_schedule(self) -> None:
        client = self._client()
        if not client.set(self._lease_key(), self._holder, nx=True, ex=LEASE_SECONDS):
            holder = client.get(self._lease_key())
            shown = holder.decode() if isinstance(holder, bytes) else holder
            raise BeatAlreadyRunning(
                f"another beat already runs for swarm {self.app.swarmq_roster().swarm!r} "
                f"(held by {shown}); exactly one beat may run"
            )
        self._held = True
        super().setup_schedule()

    def tick(self, *args: Any, **kwargs: Any) -> float:
        self._renew()
        interval: float = super().tick(*args, **kwargs)
        return min(interval, LEASE_SECONDS / 4)

    def _renew(self) -> None:
        client = self._client()
        try:
            holder = client.get(self._lease_key())
            if holder is not None and holder.decode() != self._holder:
                raise BeatAlreadyRunning(f"beat lease taken over by {holder.decode()}; stopping")
            client.set(self._lease_key(), self._holder, ex=LEASE_SECONDS)
        except TRANSIENT as exc:
            log.warning("beat: cannot renew the lease (%s); will retry", exc)

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._held:
                try:
                    client = self._client()
                    holder = client.get(self._lease_key())
                    if holder is not None and holder.decode() == self._holder:
                        client.delete(self._lease_key())
                except TRANSIENT:
                    pass
                self._held = False
