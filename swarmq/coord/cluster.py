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
from swarmq.coord.settings import ClusterConfig


@dataclass
class Cluster:
    config: ClusterConfig
    client: redis.Redis
    pid: int = field(default_factory=os.getpid)
    _gate: QuotaGate | None = None
    _locks: RedisLocks | None = None

    @classmethod
    def connect(cls, config: ClusterConfig, *, check: bool = True, timeout: float = 5.0) -> Cluster:
        """Raises :class:`~swarmq.coord.connection.RedisUnavailable` naming the URL tried."""
        return cls(config, connect(config.redis_url, timeout=timeout, check=check))

    @property
    def url(self) -> str:
        return redact(self.config.redis_url)

    @property
    def gate(self) -> QuotaGate:
        if self._gate is None:
            self._gate = QuotaGate(
                self.client,
                self.config.swarm,
                self.config.quotas,
                mirror_dir=self.config.quota_dir,
                url=self.config.redis_url,
            )
        return self._gate

    @property
    def locks(self) -> RedisLocks:
        if self._locks is None:
            from swarmq.coord._identity import LockModeMismatch, ensure_identity

            if self.config.locks != "cluster":
                raise LockModeMismatch(
                    f"the roster says locks: {self.config.locks}; cluster workers and jobs hold "
                    "Redis locks, which single-host file locks do not exclude: refusing to write"
                )
            ensure_identity(
                self.config.locks, workspace_dir=self.config.workspace_dir, roots=self.config.roots
            )
            self._locks = RedisLocks(self.client, self.config.swarm, url=self.config.redis_url)
        return self._locks

    def close(self) -> None:
        self.client.close()


_current: Cluster | None = None
_guard = threading.Lock()


def current(config: ClusterConfig) -> Cluster:
    """The process-wide cluster for ``config`` (rebuilt after a fork or a settings change)."""
    global _current
    with _guard:
        if _current is None or _current.pid != os.getpid() or _current.config != config:
            _current = Cluster.connect(config, check=False)
        return _current
