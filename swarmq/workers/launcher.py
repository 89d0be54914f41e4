"""``swarmq up`` / ``down``: start what one machine needs, idempotently, and stop it gracefully.

Stopping order matters: a Celery worker in a tmux pane has a terminal, so it installs no SIGHUP
handler and killing its session would skip the warm shutdown, stranding ``acks_late`` tasks
until the visibility timeout. So ``down`` sends SIGTERM to the worker process, waits for it to
finish its current task and exit, and only then removes the session.

Workers and the beat run under :mod:`swarmq.workers.keeper`, which restarts one that exits on its
own with backoff; the pid recorded and signalled is the keeper's, which forwards the SIGTERM, and
a SIGKILL fallback kills its process group (the Celery process and its pool with it).
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
from swarmq.errors import Unavailable
from swarmq.roster.schema import Roster
from swarmq.storage.procs import pid_alive
from swarmq.workers import digest, embedded_redis, logpipe
from swarmq.workers.hosts import beat_stop_key
from swarmq.workers.processes import (
    Kind,
    ProcessSpec,
    api_spec,
    beat_spec,
    flower_spec,
    host_dir,
    metrics_spec,
    read_pid,
    worker_spec,
    write_host_record,
    write_pid,
)
from swarmq.workers.tmux import TmuxHost, tmux_available

Notify = Callable[[str], None]


class LaunchError(Unavailable, RuntimeError):
    """A process ``up`` needs (Redis, a worker session) could not be started."""


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

    @property
    def redis_started(self) -> bool:
        """Whether this ``up`` started the embedded Redis (so undoing it stops it)."""
        return self.redis == "embedded (started)"


def _quiet(_: str) -> None:
    return None


def _kill_group(pid: int) -> None:
    """SIGKILL a process and its group: a kept process (:mod:`swarmq.workers.keeper`) leads the
    group of its Celery process and that one's pool, which must not outlive it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


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
        self.tmux_installed = tmux_available()
        self.use_tmux = self.tmux_installed if use_tmux is None else use_tmux
        self.tmux = TmuxHost(roster.swarm) if self.use_tmux else None

    # -- what exists -------------------------------------------------------------------------

    def specs(
        self, *, flower: bool = False, api: bool = False, metrics: bool = False
    ) -> list[ProcessSpec]:
        out = [worker_spec(self.roster, w, self.config_path) for w in self.roster.workers]
        out.append(beat_spec(self.roster, self.config_path))
        if flower:
            out.append(flower_spec(self.roster, self.config_path))
        if api:
            out.append(api_spec(self.roster, self.config_path))
        if metrics:
            out.append(metrics_spec(self.roster, self.config_path))
        return out

    def known_specs(self) -> list[ProcessSpec]:
        """Every process this machine may be running for the swarm, optional ones included."""
        return self.specs(flower=True, api=True, metrics=True)

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

    def up(
        self,
        *,
        flower: bool = False,
        api: bool = False,
        metrics: bool = False,
        restart_timeout: float = 60.0,
    ) -> UpResult:
        for directory in ("pids", "logs"):
            (host_dir(self.roster) / directory).mkdir(parents=True, exist_ok=True)
        redis_state = self.ensure_redis()
        if not self.use_tmux:
            self.notify(
                "--no-tmux: running the processes as plain background children"
                if self.tmux_installed
                else "tmux not found: running the processes as plain background children "
                "(install tmux to watch each worker in its own session)"
            )
        result = UpResult(redis_state)
        try:
            for spec in self.specs(flower=flower, api=api, metrics=metrics):
                pid = self.pid(spec)
                if pid is not None:
                    result.actions.append(self._refresh(spec, pid, restart_timeout))
                    continue
                standby = ""
                if spec.kind is Kind.BEAT:
                    holder = self._beat_holder()
                    if holder is not None:  # every host runs a beat; the others stand by
                        standby = f" (standby: the lease is held by {holder})"
                pid = self._start(spec)
                result.actions.append(
                    Action(spec.name, spec.kind.value, "started", f"pid {pid}{standby}")
                )
        except BaseException:
            self.undo(result)  # a failed `up` leaves nothing it started behind
            raise
        self.record()
        return result

    def undo(self, result: UpResult, *, timeout: float = 20.0) -> list[Action]:
        """Stop what ``result``'s ``up`` started (its tmux sessions too) and the embedded Redis
        if it started that; processes that ran before it are left alone."""
        started = {a.name for a in result.actions if a.outcome == "started"}
        stopped: list[Action] = []
        for spec in self.known_specs():
            if spec.name not in started:
                continue
            pid = self.pid(spec)
            if pid is not None:
                self._stop_one(spec, pid, timeout)
            elif self.tmux is not None:
                self.tmux.kill(spec.session)
            with contextlib.suppress(FileNotFoundError):
                spec.pidfile.unlink()
            digest.forget(spec)
            stopped.append(Action(spec.name, spec.kind.value, "stopped", "undone"))
        if result.redis_started and embedded_redis.stop(self.roster.runtime_dir):
            stopped.append(Action("redis", "redis", "stopped", "embedded, undone"))
        self.record()
        return stopped

    # -- roster changes ----------------------------------------------------------------------

    def _refresh(self, spec: ProcessSpec, pid: int, timeout: float, force: bool = False) -> Action:
        """Restart a running process whose roster digest changed (or ``force``); else leave it."""
        changed = digest.changes(self.roster, spec)
        if changed is None and not force:
            digest.record(self.roster, spec)  # started before digests: adopt what runs now
            return Action(
                spec.name, spec.kind.value, "already running", f"pid {pid}; digest recorded"
            )
        if not changed and not force:
            return Action(spec.name, spec.kind.value, "already running", f"pid {pid}")
        why = f"changed: {', '.join(changed)}" if changed else "forced"
        self.notify(f"restarting {spec.kind.value} {spec.name} (pid {pid}): {why}")
        if not self._stop_one(spec, pid, timeout):
            why += f"; pid {pid} did not stop within {timeout:.0f}s and was killed"
        new_pid = self._start(spec)
        return Action(spec.name, spec.kind.value, "restarted", f"{why}; pid {new_pid}")

    def reload(self, *, timeout: float = 60.0, force: bool = False) -> list[Action]:
        """Restart exactly the running processes whose roster digest changed (all with ``force``)."""
        actions = []
        for spec in self.known_specs():
            pid = self.pid(spec)
            if pid is None:
                if spec.kind in (Kind.WORKER, Kind.BEAT):
                    actions.append(
                        Action(spec.name, spec.kind.value, "not running", "`swarmq up` starts it")
                    )
                continue
            action = self._refresh(spec, pid, timeout, force=force)
            if action.outcome == "already running":
                action.outcome = "unchanged"
            actions.append(action)
        return actions

    def _stop_one(self, spec: ProcessSpec, pid: int, timeout: float) -> bool:
        """SIGTERM (warm shutdown), wait, SIGKILL if needed; True when it stopped by itself."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped = not pid_alive(pid)
        if not stopped:
            _kill_group(pid)
            while pid_alive(pid) and time.monotonic() < deadline + 5:
                time.sleep(0.05)
        if self.tmux is not None:
            self.tmux.kill(spec.session)
        with contextlib.suppress(FileNotFoundError):
            spec.pidfile.unlink()
        return stopped

    def record(self) -> Path:
        """Write this host's ``host.json``: what runs here now (read by every host's status)."""
        running: list[dict[str, object]] = []
        for spec in self.known_specs():
            pid = self.pid(spec)
            if pid is not None:
                running.append(
                    {
                        "name": spec.name,
                        "kind": spec.kind.value,
                        "session": spec.session,
                        "pid": pid,
                    }
                )
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
            # The output goes through the size-capped log pipe (it exits when the process does).
            pipe = subprocess.Popen(
                logpipe.command(spec.logfile),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            assert pipe.stdin is not None
            proc = subprocess.Popen(
                spec.argv,
                cwd=cwd,
                env={**os.environ, **spec.env},
                stdout=pipe.stdin,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            pipe.stdin.close()
            pid = proc.pid
        write_pid(spec.pidfile, pid)
        digest.record(self.roster, spec)
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
                digest.forget(spec)
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
                _kill_group(pid)
            if self.tmux is not None:
                self.tmux.kill(spec.session)
            with contextlib.suppress(FileNotFoundError):
                spec.pidfile.unlink()
            digest.forget(spec)
            detail = (
                "warm shutdown" if outcome == "stopped" else f"still running after {timeout:.0f}s"
            )
            actions.append(Action(spec.name, spec.kind.value, outcome, detail))
        if not keep_redis and embedded_redis.stop(self.roster.runtime_dir):
            actions.append(Action("redis", "redis", "stopped", "embedded"))
        self.record()
        return actions
