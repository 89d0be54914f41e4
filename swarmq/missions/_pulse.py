"""A run's heartbeat stamp, kept fresh by a thread of its own from the claim to the settle.

The heartbeat file is the only evidence the reaper and a redelivery have that a run is alive
(:mod:`swarmq.missions.recovery`). It used to be stamped only by the agent loop, between
``heartbeat_seconds`` waits, and that loop also took runtime.json's store lock, whose fence
check and release wait out a Redis outage (``redis_outage_grace_seconds``, 300 s by default).
Worse, nothing stamped it after the agent exited: the settle (events, handoff, summary, ledger)
takes store locks that wait out an outage too, or a lock left held by an acquire whose reply a
Redis SIGKILL lost (until its 30 s lease lapses). A live run could so look dead for longer than
``stale_after_seconds`` or ``reap_after_seconds`` right after a Redis restart, when its worker's
consumer is still reconnecting and does not answer the reaper's ping: the mission was resumed
elsewhere and its agent started a second time, and the first run's settle was thrown away.

The pulse touches only local files (never Redis, never a store lock), so only the death or the
stop of its process ages the stamp. It stops for good when the run settles, or when the file
names another claim (a takeover, or the reaper's ``abandoned`` mark): it never stamps over
either, and never recreates a file the settle removed.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from swarmq.missions.history import read_beat, write_beat
from swarmq.storage.clock import iso

log = logging.getLogger(__name__)


class Pulse:
    """Stamps ``heartbeatAt`` in one run's heartbeat file every ``every`` seconds."""

    def __init__(self, runtime_dir: Path, assignment_id: str, token: str, every: float) -> None:
        self.runtime_dir = runtime_dir
        self.assignment_id = assignment_id
        self.token = token
        self.every = every
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start stamping (idempotent; a no-op once stopped)."""
        with self._lock:
            if self._thread is not None or self._stopped.is_set():
                return
            self._thread = threading.Thread(
                target=self._run, name=f"mission-pulse-{self.assignment_id}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """No stamp is written after this returns (a stamp in progress finishes first)."""
        with self._lock:
            self._stopped.set()

    def stamp(self, *, create: bool = False, **extra: Any) -> dict[str, Any] | None:
        """Stamp now with ``extra`` fields; the file's content, or None (nothing written) when
        the pulse is stopped or the file names another claim or is gone (``create``: a missing
        file is written again, as the agent loop's beat always did)."""
        with self._lock:
            if self._stopped.is_set():
                return None
            beat = read_beat(self.runtime_dir, self.assignment_id)
            if beat.get("token") != self.token and not (create and beat.get("token") is None):
                return None
            beat.update(extra, heartbeatAt=iso())
            write_beat(self.runtime_dir, self.assignment_id, beat)
            return beat

    def _run(self) -> None:
        while not self._stopped.wait(self.every):
            try:
                if self.stamp() is None:
                    with self._lock:
                        if not self._stopped.is_set():  # taken over or settled: not ours
                            self._stopped.set()
                    return
            except OSError as exc:  # a full disk or a vanished runtime dir: try again next time
                log.warning("mission run %s: heartbeat not written: %s", self.assignment_id, exc)
