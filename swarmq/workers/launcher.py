"""``swarmq up`` / ``down``: start what one machine needs, idempotently, and stop it gracefully.

Stopping order matters: a Celery worker in a tmux pane has a terminal, so it installs no SIGHUP
handler and killing its session would skip the warm shutdown, stranding ``acks_late`` tasks
until the visibility timeout. So ``down`` sends SIGTERM to the worker process, waits for it to
finish its current task and exit, and only then removes the session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from swarmq.coord import keys
from swarmq.coord.connection import RedisUnavailable, answers, connect, redact
from swarmq.memory.procs import pid_alive
from swarmq.roster.schema import Roster
from swarmq.workers import embedded_redis
from swarmq.workers.hosts import beat_stop_key
from swarmq.workers.processes import (
    Kind,
    ProcessSpec,
    api_spec,
    beat_spec,
    flower_spec,
    host_dir,
    read_pid,
    worker_spec,
    write_host_record,
    write_pid,
)
from swarmq.workers.tmux import TmuxHost, tmux_available

Notify = Callable[[str], None]


class LaunchError(RuntimeError):
    pass


@dataclass
class Action:
    """What ``up`` or ``down`` did to one process."""

    name: str
    kind: str
    outcome: str
    detail: str = ""


@dataclass
class UpResult:
    redis: str
    actions: list[Action] = field(default_factory=list)


def _quiet(_: str) -> None:
    return None


class Supervisor:
    """Starts, finds and stops the processes of one swarm on this machine."""

    def __init__(
        self,
        roster: Roster,
        config_path: Path,
        *,
        use_tmux: bool | None = None,
        notify: Notify = _quiet,
    ) -> None:
        self.roster = roster
        self.config_path = config_path
        self.notify = notify
        self.use_tmux = tmux_available() if use_tmux is None else use_tmux
        self.tmux = TmuxHost(roster.swarm) if self.use_tmux else None

    # -- what exists -------------------------------------------------------------------------

    def specs(self, *, flower: bool = False, api: bool = False) -> list[ProcessSpec]:
        out = [worker_spec(self.roster, w, self.config_path) for w in self.roster.workers]
        out.append(beat_spec(self.roster, self.config_path))
        if flower:
            out.append(flower_spec(self.roster, self.config_path))
        if api:
            out.append(api_spec(self.roster, self.config_path))
        return out

    def known_specs(self) -> list[ProcessSpec]:
        """Every process this machine may be running for the swarm, optional ones included."""
        return self.specs(flower=True, api=True)

    def pid(self, spec: ProcessSpec) -> int | None:
        """The live pid of ``spec``'s process, or None."""
        if self.tmux is not None:
            pane = self.tmux.pane(spec.session)
            if pane is not None and not pane.dead and pid_alive(pane.pid):
                return pane.pid
        pid = read_pid(spec.pidfile)
        return pid if pid_alive(pid) else None

    def running(self, spec: ProcessSpec) -> bool:
        return self.pid(spec) is not None

    # -- Redis -------------------------------------------------------------------------------

    def ensure_redis(self) -> str:
        """Make sure Redis answers; returns how (``external``, ``embedded (started)``, ...)."""
        url = self.roster.redis_url
        if answers(url):
            embedded = embedded_redis.embedded_for(self.roster.runtime_dir)
            return "embedded" if embedded.pid() is not None else "external"
        if os.environ.get("REDIS_URL"):
            raise LaunchError(
                f"Redis at {redact(url)} (from REDIS_URL) is unreachable; start it or unset REDIS_URL "
                "to let swarmq run an embedded Redis"
            )
        self.notify(f"no Redis answers at {redact(url)}: starting an embedded Redis")
        try:
            embedded_redis.start(url, self.roster.runtime_dir)
        except embedded_redis.EmbeddedRedisError as exc:
            raise LaunchError(str(exc)) from exc
        return "embedded (started)"

    # -- up ----------------------------------------------------------------------------------

    def up(self, *, flower: bool = False, api: bool = False) -> UpResult:
        for directory in ("pids", "logs"):
            (host_dir(self.roster) / directory).mkdir(parents=True, exist_ok=True)
        redis_state = self.ensure_redis()
        if not self.use_tmux:
            self.notify(
                "tmux not found: running the processes as plain background children "
                "(install tmux to watch each worker in its own session)"
            )
        result = UpResult(redis_state)
        for spec in self.specs(flower=flower, api=api):
            pid = self.pid(spec)
            if pid is not None:
                result.actions.append(
                    Action(spec.name, spec.kind.value, "already running", f"pid {pid}")
                )
                continue
            standby = ""
            if spec.kind is Kind.BEAT:
                holder = self._beat_holder()
                if holder is not None:  # every host runs a beat; the others stand by
                    standby = f" (standby: the lease is held by {holder})"
            pid = self._start(spec)
            result.actions.append(Action(spec.name, spec.kind.value, "started", f"pid {pid}{standby}"))
        self.record()
        return result

    def record(self) -> Path:
        """Write this host's ``host.json``: what runs here now (read by every host's status)."""
        running: list[dict[str, object]] = []
        for spec in self.known_specs():
            pid = self.pid(spec)
            if pid is not None:
                running.append({"name": spec.name, "kind": spec.kind.value, "session": spec.session, "pid": pid})
        return write_host_record(self.roster, running)

    def _beat_holder(self) -> str | None:
        try:
            client = connect(self.roster.redis_url, timeout=2.0)
        except RedisUnavailable:
            return None
        try:
            client.delete(beat_stop_key(self.roster.swarm))  # a past `down --all` is over
            holder = client.get(keys.beat_lock(self.roster.swarm))
        finally:
            client.close()
        if holder is None:
            return None
        return holder.decode() if isinstance(holder, bytes) else str(holder)

    def _start(self, spec: ProcessSpec) -> int:
        cwd = self.roster.workspace_dir
        cwd.mkdir(parents=True, exist_ok=True)
        if self.tmux is not None:
            self.tmux.kill(spec.session)  # a dead pane left by remain-on-exit
            pid = self.tmux.start(
                spec.session, spec.argv, env=spec.env, cwd=cwd, log_file=spec.logfile
            ).pid
        else:
            spec.logfile.parent.mkdir(parents=True, exist_ok=True)
            with spec.logfile.open("ab") as log:
                proc = subprocess.Popen(
                    spec.argv,
                    cwd=cwd,
                    env={**os.environ, **spec.env},
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            pid = proc.pid
        write_pid(spec.pidfile, pid)
        return pid

    # -- down --------------------------------------------------------------------------------

    def down(self, *, timeout: float = 60.0, keep_redis: bool = False) -> list[Action]:
        actions: list[Action] = []
        specs = self.known_specs()
        # Workers first (they may be finishing tasks), then the singletons.
        ordered = [s for s in specs if s.kind is Kind.WORKER] + [
            s for s in specs if s.kind is not Kind.WORKER
        ]
        pending: list[tuple[ProcessSpec, int]] = []
        for spec in ordered:
            pid = self.pid(spec)
            if pid is None:
                if self.tmux is not None and self.tmux.kill(spec.session):
                    actions.append(Action(spec.name, spec.kind.value, "removed", "exited earlier"))
                with contextlib.suppress(FileNotFoundError):
                    spec.pidfile.unlink()
                continue
            self.notify(f"stopping {spec.kind.value} {spec.name} (pid {pid})")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            pending.append((spec, pid))
        deadline = time.monotonic() + timeout
        for spec, pid in pending:
            outcome = "stopped"
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if pid_alive(pid):
                outcome = "killed"
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if self.tmux is not None:
                self.tmux.kill(spec.session)
            with contextlib.suppress(FileNotFoundError):
                spec.pidfile.unlink()
            detail = (
                "warm shutdown" if outcome == "stopped" else f"still running after {timeout:.0f}s"
            )
            actions.append(Action(spec.name, spec.kind.value, outcome, detail))
        if not keep_redis and embedded_redis.stop(self.roster.runtime_dir):
            actions.append(Action("redis", "redis", "stopped", "embedded"))
        self.record()
        return actions
