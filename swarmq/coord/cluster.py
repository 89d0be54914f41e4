"""The coordination services of one process, built once from the roster.

Workers, the CLI and the HTTP API all reach Redis through this object, so there is one client
(pool), one quota gate and one lock factory per process. After a fork the client is rebuilt
(redis-py's pool also guards against sharing sockets across processes).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import redis

from swarmq.coord.connection import connect, redact
from swarmq.coord.locks import RedisLocks
from swarmq.coord.quota import QuotaGate
from swarmq.coord.settings import ClusterSettings


@dataclass
class Cluster:
    roster: ClusterSettings
    client: redis.Redis
    pid: int = field(default_factory=os.getpid)
    _gate: QuotaGate | None = None
    _locks: RedisLocks | None = None

    @classmethod
    def connect(cls, roster: ClusterSettings, *, check: bool = True, timeout: float = 5.0) -> Cluster:
        """Raises :class:`~swarmq.coord.connection.RedisUnavailable` naming the URL tried."""
        return cls(roster, connect(roster.redis_url, timeout=timeout, check=check))

    @property
    def url(self) -> str:
        return redact(self.roster.redis_url)

    @property
    def gate(self) -> QuotaGate:
        if self._gate is None:
            self._gate = QuotaGate(
                self.client,
                self.roster.swarm,
                self.roster.quotas,
                mirror_dir=self.roster.swarm_dir,
                url=self.roster.redis_url,
            )
        return self._gate

    @property
    def locks(self) -> RedisLocks:
        if self._locks is None:
            from swarmq.coord.identity import LockModeMismatch, ensure_identity

            if self.roster.locks != "cluster":
                raise LockModeMismatch(
                    f"the roster says locks: {self.roster.locks}; cluster workers and jobs hold "
                    "Redis locks, which single-host file locks do not exclude: refusing to write"
                )
            ensure_identity(self.roster)
            self._locks = RedisLocks(self.client, self.roster.swarm, url=self.roster.redis_url)
        return self._locks

    def close(self) -> None:
        self.client.close()


_current: Cluster | None = None
_guard = threading.Lock()


def current(roster: ClusterSettings) -> Cluster:
    """The process-wide cluster for ``roster`` (rebuilt after a fork or a roster change)."""
    global _current
    with _guard:
        if _current is None or _current.pid != os.getpid() or _current.roster is not roster:
            _current = Cluster.connect(roster, check=False)
        return _current
