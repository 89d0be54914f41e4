"""Shared helpers for tests: rosters on disk and real Celery worker processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from celery import Celery

from swarmq.names import JOB_FAMILIES
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.workers.app import create_app

REPO = Path(__file__).resolve().parent.parent


def write_roster(
    directory: Path,
    swarm: str,
    redis_url: str,
    *,
    workers: Sequence[Mapping[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    """A swarm.yaml under ``directory`` whose every root lives in ``directory``."""
    data: dict[str, Any] = {
        "swarm": swarm,
        "workspace": str(directory / "project"),
        "paths": {
            "profiles": str(directory / "profiles"),
            "runtime": str(directory / "runtime"),
            "shared": str(directory / "shared"),
            "hive": str(directory / "hive"),
        },
        "redis_url": redis_url,
        "workers": list(workers)
        if workers is not None
        else [{"id": "w1", "role": "builder", "queues": list(JOB_FAMILIES)}],
    }
    data.update(extra)
    (directory / "project").mkdir(parents=True, exist_ok=True)
    path = directory / "swarm.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def worker_env(
    roster_file: Path, worker_id: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SWARMQ_CONFIG")}
    env.update(
        {
            "SWARMQ_CONFIG": str(roster_file),
            "SWARMQ_WORKER_ID": worker_id,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
        }
    )
    env.update(extra or {})
    return env


class WorkerProcess:
    """A real ``celery worker`` subprocess for one roster entry."""

    def __init__(
        self,
        roster_file: Path,
        worker_id: str,
        *,
        pool: str = "prefork",
        concurrency: int = 1,
        extra_tasks: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        loglevel: str = "INFO",
    ) -> None:
        self.roster_file = roster_file
        self.roster: Roster = load_roster(roster_file, env={})
        self.worker_id = worker_id
        self.hostname = f"{worker_id}@{socket.gethostname()}"
        queues = ",".join(self.roster.worker(worker_id).all_queues())
        extra = {"SWARMQ_EXTRA_TASKS": ",".join(extra_tasks)} if extra_tasks else {}
        self.log_path = roster_file.parent / f"worker-{worker_id}.log"
        self.argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "swarmq.workers.app",
            "worker",
            "-n",
            self.hostname,
            "-Q",
            queues,
            "-P",
            pool,
            "-c",
            str(concurrency),
            "-l",
            loglevel,
            "--without-mingle",
            "--without-gossip",
        ]
        self.env = worker_env(roster_file, worker_id, {**extra, **(env or {})})
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, app: Celery, timeout: float = 30.0) -> WorkerProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker {self.worker_id} exited early:\n{self.log()}")
            if app.control.ping(destination=[self.hostname], timeout=0.5):
                return self
        raise RuntimeError(
            f"worker {self.worker_id} did not answer ping in {timeout}s:\n{self.log()}"
        )

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except FileNotFoundError:
            return ""

    def stop(self, timeout: float = 20.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def wait_for_file(path: Path, timeout: float = 30.0) -> Path:
    """``path`` once it exists: for files a worker writes after the state a test waited for
    (a mission's archive is written after its ledger says complete)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} was not written within {timeout}s")
        time.sleep(0.05)
    return path


def client_app(roster_file: Path) -> Celery:
    """A Celery client configured from ``roster_file`` (tasks are sent by name)."""
    return create_app(load_roster(roster_file, env={}))
