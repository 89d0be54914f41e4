"""Running the worker's agent command: argv template, no shell, timeout, streamed output.

The agent runs in its own process group (so a timeout or cancel kills everything it started)
and, on Linux, dies with the process that started it (``PR_SET_PDEATHSIG``), so a worker killed
mid-mission does not leave an orphan agent writing to the mission. The death signal is set by
util-linux ``setpriv`` exec'd in front of the agent when it is installed: a Python ``preexec_fn``
forces a full ``fork`` of the (large) worker process, 5-15 ms of dispatch latency, where
``setpriv`` keeps ``vfork`` (about 1.5 ms). Without ``setpriv`` the ``preexec_fn`` path is used. Output lines go to the
transcript file, to ``echo`` (the worker's stdout, i.e. its tmux pane) and to ``on_line``.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from swarmq.storage.clock import iso


@dataclass
class AgentResult:
    exit_code: int | None
    started_at: str
    ended_at: str
    pid: int | None = None
    timed_out: bool = False
    stopped: str | None = None
    """Why the run was stopped from outside (mission cancelled, claim lost), if it was."""
    error: str | None = None
    """The agent could not start (command not found, not executable)."""
    tail: str = ""
    """The last output lines, for failure reasons."""


def build_argv(template: list[str], values: Mapping[str, str]) -> list[str]:
    """Substitute ``{prompt}``, ``{prompt_file}`` ... inside each argv element (never a shell)."""
    out = []
    for arg in template:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    os.setsid()
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


_SETPRIV: list[str | None] = []


def _setpriv() -> str | None:
    """``setpriv`` when it can set the parent-death signal (Linux util-linux ≥ 2.33), else None."""
    if not _SETPRIV:
        path = shutil.which("setpriv") if os.uname().sysname == "Linux" else None
        if path is not None:
            probe = subprocess.run(
                [path, "--pdeathsig", "KILL", "--", "true"], capture_output=True, check=False
            )
            path = path if probe.returncode == 0 else None
        _SETPRIV.append(path)
    return _SETPRIV[0]


def _executable(command: str, env: Mapping[str, str], cwd: Path | None) -> str:
    """The program ``command`` names, or the ``OSError`` Popen would raise for it: behind
    ``setpriv`` a missing agent would otherwise look like an agent that exited with 127."""
    if "/" in command:
        path = Path(command) if Path(command).is_absolute() or cwd is None else cwd / command
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
        return command
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
    return found


def spawn(argv: list[str], *, env: Mapping[str, str], cwd: Path | None) -> subprocess.Popen[bytes]:
    """Start the agent in a new session that dies with this process; output on one pipe."""
    setpriv = _setpriv()
    if setpriv is not None:
        argv = [setpriv, "--pdeathsig", "KILL", "--", _executable(argv[0], env, cwd), *argv[1:]]
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=str(cwd) if cwd else None,
            close_fds=True,
            start_new_session=True,
        )
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env),
        cwd=str(cwd) if cwd else None,
        close_fds=True,
        preexec_fn=_die_with_parent,
    )


def kill_group(pid: int, grace: float) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after ``grace`` seconds."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_agent(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    timeout: float,
    transcript: Path,
    on_line: Callable[[str], None],
    on_start: Callable[[int], object] = lambda pid: None,
    before_output: Callable[[], object] = lambda: None,
    heartbeat: Callable[[], str | None] = lambda: None,
    heartbeat_seconds: float = 10.0,
    echo: BinaryIO | None = None,
    echo_prefix: str = "",
    kill_grace: float = 5.0,
) -> AgentResult:
    """Run to completion, timeout or stop; ``heartbeat`` returning a reason stops the agent.

    ``on_start`` runs as soon as the agent exists; ``before_output`` on the output thread
    before the first line is read (so what it records precedes the agent's markers, and a slow
    lock there delays the output, never the heartbeat). If either raises, the agent is stopped.
    """
    started = iso()
    transcript.parent.mkdir(parents=True, exist_ok=True)
    with transcript.open("ab") as log:
        log.write(f"=== {started} agent start: {argv[0]} ===\n".encode())
        log.flush()
        try:
            proc = spawn(argv, env=env, cwd=cwd)
        except OSError as exc:
            reason = f"agent command {argv[0]!r} could not start: {exc.strerror or exc}"
            log.write(f"=== {iso()} {reason} ===\n".encode())
            return AgentResult(None, started, iso(), error=reason)
        try:  # the caller records the start while the agent runs; if that fails, stop the agent
            on_start(proc.pid)
        except BaseException:
            kill_group(proc.pid, 0)
            proc.wait()
            raise
        tail: list[str] = []
        reader_error: list[BaseException] = []

        def pump() -> None:
            assert proc.stdout is not None
            try:
                before_output()
                for raw in iter(proc.stdout.readline, b""):
                    log.write(raw)
                    log.flush()
                    if echo is not None:
                        with contextlib.suppress(OSError, ValueError):
                            echo.write(echo_prefix.encode() + raw)
                            echo.flush()
                    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    tail.append(line)
                    del tail[:-20]
                    on_line(line)
            except BaseException as exc:  # surfaced to the caller after the agent is stopped
                reader_error.append(exc)
                kill_group(proc.pid, 0)

        reader = threading.Thread(target=pump, name=f"agent-output-{proc.pid}", daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        next_beat = time.monotonic() + heartbeat_seconds
        timed_out = False
        stopped: str | None = None
        try:
            while proc.poll() is None:
                now = time.monotonic()
                if now >= deadline:
                    timed_out = True
                    kill_group(proc.pid, kill_grace)
                    break
                if now >= next_beat:
                    next_beat = now + heartbeat_seconds
                    stopped = heartbeat()
                    if stopped:
                        kill_group(proc.pid, kill_grace)
                        break
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=min(0.2, max(0.01, deadline - now)))
        except BaseException:
            kill_group(proc.pid, 0)
            proc.wait()
            reader.join(timeout=5)
            raise
        code = proc.wait()
        # A grandchild that kept the pipe open must not hold us: the group is killed above on
        # stop/timeout; on normal exit give the reader a moment to drain.
        reader.join(timeout=10)
        if reader.is_alive():
            kill_group(proc.pid, 0)
            reader.join(timeout=5)
        ended = iso()
        log.write(
            f"=== {ended} agent exit: {code}{' (timed out)' if timed_out else ''} ===\n".encode()
        )
    if reader_error:
        raise reader_error[0]
    return AgentResult(
        code,
        started,
        ended,
        pid=proc.pid,
        timed_out=timed_out,
        stopped=stopped,
        tail="\n".join(tail[-10:]),
    )
