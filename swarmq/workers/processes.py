"""What one machine runs for a swarm: its command lines, environments and bookkeeping files.

A host's own runtime state (pid files, logs, the beat's schedule file, ``host.json``) lives in
``<runtime>/hosts/<hostname>/``: the runtime directory may be shared by every host of the swarm,
and one host must never read, overwrite or delete another's records.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from swarmq.missions.config import WorkerConfig
from swarmq.roster.schema import Roster
from swarmq.workers import keeper

APP = "swarmq.workers.app"


class Kind(StrEnum):
    WORKER = "worker"
    BEAT = "beat"
    FLOWER = "flower"
    API = "api"
    METRICS = "metrics"


@dataclass(frozen=True)
class ProcessSpec:
    """One long-running process: started in tmux session ``session`` or as a plain child."""

    kind: Kind
    name: str
    """Roster worker id, or the process kind for singletons."""
    session: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    pidfile: Path = Path()
    logfile: Path = Path()

    @property
    def keeper_state(self) -> Path:
        """The keeper's state file (restarts, last exit) of a kept process."""
        return self.pidfile.with_name(f"{self.session}.keeper.json")


def celery_hostname(worker_id: str) -> str:
    """The node name a roster worker runs under (``-n <id>@%h``)."""
    return f"{worker_id}@{socket.gethostname()}"


def _base_env(roster: Roster, config_path: Path) -> dict[str, str]:
    env = {"SWARMQ_CONFIG": str(config_path.resolve()), "PYTHONUNBUFFERED": "1"}
    for passthrough in ("REDIS_URL", "SWARMQ_EXTRA_TASKS", "PYTHONPATH", "SWARMQ_LOG_FORMAT"):
        if os.environ.get(passthrough):
            env[passthrough] = os.environ[passthrough]
    return env


HOSTS_DIR = "hosts"
HOST_RECORD = "host.json"


def host_name() -> str:
    """This machine's name as Celery uses it in node names (``<worker>@<host>``)."""
    return socket.gethostname()


def host_dir(roster: Roster, host: str | None = None) -> Path:
    """``<runtime>/hosts/<host>/``: the runtime state that belongs to one host."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host or host_name()).strip(".") or "_"
    return roster.runtime_dir / HOSTS_DIR / safe


def _files(roster: Roster, session: str) -> tuple[Path, Path]:
    here = host_dir(roster)
    return here / "pids" / f"{session}.pid", here / "logs" / f"{session}.log"


def write_host_record(roster: Roster, processes: list[dict[str, object]]) -> Path:
    """What ``up``/``down`` left running on this host, for every host's ``status`` to show."""
    from swarmq.storage.clock import iso

    path = host_dir(roster) / HOST_RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(
        json.dumps({"host": host_name(), "updatedAt": iso(), "processes": processes}, indent=2)
    )
    os.replace(tmp, path)
    return path


def host_records(roster: Roster) -> dict[str, dict[str, object]]:
    """Every host's last ``host.json`` (unreadable ones reported as such, never fatal)."""
    out: dict[str, dict[str, object]] = {}
    root = roster.runtime_dir / HOSTS_DIR
    for record in sorted(root.glob(f"*/{HOST_RECORD}")) if root.is_dir() else []:
        try:
            data = json.loads(record.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            data = {"error": f"{record}: {exc}"}
        host = (
            str(data.get("host") or record.parent.name)
            if isinstance(data, dict)
            else record.parent.name
        )
        out[host] = data if isinstance(data, dict) else {"error": f"{record}: not an object"}
    return out


def celery_worker_args(worker: WorkerConfig) -> list[str]:
    """``celery …`` arguments of a roster worker (shared by ``swarmq up`` and docker-compose)."""
    queues = ",".join(worker.all_queues())
    return ["-A", APP, "worker", "-n", f"{worker.id}@%h", "-Q", queues,
            "-c", str(worker.concurrency), "-P", worker.pool.value, "-l", "INFO", "-E"]  # fmt: skip


def celery_beat_args(schedule_file: str) -> list[str]:
    return ["-A", APP, "beat", "-s", schedule_file, "-l", "INFO"]


def celery_flower_args(address: str, port: int) -> list[str]:
    return ["-A", APP, "flower", f"--address={address}", f"--port={port}"]


CELERY = [sys.executable, "-m", "celery"]


def _kept(pidfile: Path, session: str, argv: list[str]) -> list[str]:
    """``argv`` under the keeper, which restarts it when it exits on its own
    (:mod:`swarmq.workers.keeper`)."""
    return keeper.command(pidfile.with_name(f"{session}.keeper.json"), argv)


def worker_spec(roster: Roster, worker: WorkerConfig, config_path: Path) -> ProcessSpec:
    session = f"swarm-{worker.id}"
    pidfile, logfile = _files(roster, session)
    env = {**_base_env(roster, config_path), "SWARMQ_WORKER_ID": worker.id}
    return ProcessSpec(
        Kind.WORKER,
        worker.id,
        session,
        _kept(pidfile, session, [*CELERY, *celery_worker_args(worker)]),
        env,
        pidfile,
        logfile,
    )


def beat_spec(roster: Roster, config_path: Path) -> ProcessSpec:
    session = "swarmq-beat"
    pidfile, logfile = _files(roster, session)
    argv = _kept(
        pidfile,
        session,
        [*CELERY, *celery_beat_args(str(host_dir(roster) / "celerybeat-schedule"))],
    )
    env = {**_base_env(roster, config_path), "SWARMQ_PROCESS": "beat"}
    return ProcessSpec(Kind.BEAT, "beat", session, argv, env, pidfile, logfile)


def flower_spec(roster: Roster, config_path: Path) -> ProcessSpec:
    session = "swarmq-flower"
    pidfile, logfile = _files(roster, session)
    # Persistent: Flower keeps its task history in the runtime dir and saves it every 15 s and
    # on exit, so tasks seen before a Flower restart are still listed after it.
    persist = [
        "--persistent=True",
        f"--db={roster.runtime_dir / 'flower.db'}",
        "--state_save_interval=15000",
    ]
    argv = [*CELERY, *celery_flower_args(roster.flower.address, roster.flower.port), *persist]
    env = {**_base_env(roster, config_path), "SWARMQ_PROCESS": "flower"}
    if os.environ.get("FLOWER_BASIC_AUTH"):
        env["FLOWER_BASIC_AUTH"] = os.environ["FLOWER_BASIC_AUTH"]
    return ProcessSpec(Kind.FLOWER, "flower", session, argv, env, pidfile, logfile)


def flower_url(roster: Roster) -> str:
    host = roster.flower.address
    host = "127.0.0.1" if host in ("", "0.0.0.0") else f"[{host}]" if ":" in host else host
    return f"http://{host}:{roster.flower.port}/"


def api_spec(roster: Roster, config_path: Path) -> ProcessSpec:
    session = "swarmq-api"
    pidfile, logfile = _files(roster, session)
    argv = [sys.executable, "-m", "swarmq.cli", "--config", str(config_path.resolve()), "api"]
    return ProcessSpec(
        Kind.API, "api", session, argv, _base_env(roster, config_path), pidfile, logfile
    )


def metrics_spec(roster: Roster, config_path: Path) -> ProcessSpec:
    """The Prometheus exporter (``swarmq metrics``) on ``metrics.host:metrics.port``."""
    session = "swarmq-metrics"
    pidfile, logfile = _files(roster, session)
    argv = [sys.executable, "-m", "swarmq.cli", "--config", str(config_path.resolve()), "metrics"]
    return ProcessSpec(
        Kind.METRICS, "metrics", session, argv, _base_env(roster, config_path), pidfile, logfile
    )


def read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def write_pid(pidfile: Path, pid: int) -> None:
    pidfile.parent.mkdir(parents=True, exist_ok=True)
    tmp = pidfile.with_name(pidfile.name + ".tmp")
    tmp.write_text(f"{pid}\n")
    os.replace(tmp, pidfile)
