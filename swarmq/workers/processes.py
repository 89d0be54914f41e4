"""What one machine runs for a swarm: its command lines, environments and bookkeeping files."""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from swarmq.roster.schema import Roster, WorkerConfig

APP = "swarmq.workers.app"


class Kind(StrEnum):
    WORKER = "worker"
    BEAT = "beat"
    FLOWER = "flower"
    API = "api"


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


def celery_hostname(worker_id: str) -> str:
    """The node name a roster worker runs under (``-n <id>@%h``)."""
    return f"{worker_id}@{socket.gethostname()}"


def _base_env(roster: Roster, config_path: Path) -> dict[str, str]:
    env = {"SWARMQ_CONFIG": str(config_path.resolve()), "PYTHONUNBUFFERED": "1"}
    for passthrough in ("REDIS_URL", "SWARMQ_EXTRA_TASKS", "PYTHONPATH", "SWARMQ_LOG_FORMAT"):
        if os.environ.get(passthrough):
            env[passthrough] = os.environ[passthrough]
    return env


def _files(roster: Roster, session: str) -> tuple[Path, Path]:
    runtime = roster.runtime_dir
    return runtime / "pids" / f"{session}.pid", runtime / "logs" / f"{session}.log"


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


def worker_spec(roster: Roster, worker: WorkerConfig, config_path: Path) -> ProcessSpec:
    session = f"swarm-{worker.id}"
    pidfile, logfile = _files(roster, session)
    env = {**_base_env(roster, config_path), "SWARMQ_WORKER_ID": worker.id}
    return ProcessSpec(
        Kind.WORKER,
        worker.id,
        session,
        [*CELERY, *celery_worker_args(worker)],
        env,
        pidfile,
        logfile,
    )


def beat_spec(roster: Roster, config_path: Path) -> ProcessSpec:
    session = "swarmq-beat"
    pidfile, logfile = _files(roster, session)
    argv = [*CELERY, *celery_beat_args(str(roster.runtime_dir / "celerybeat-schedule"))]
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
