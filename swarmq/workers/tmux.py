"""tmux sessions on a dedicated socket, one per long-running process (``swarm-<workerId>``).

Sessions are looked up by exact name (``=swarm-a``): a bare ``swarm-1`` target would also match
``swarm-12``. Panes stay open after their process exits (``remain-on-exit``), so a crashed
worker's last words stay readable and ``swarmq status`` can tell "exited" from "never started".
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import libtmux
from libtmux.exc import LibTmuxException

from swarmq.workers import logpipe


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


def socket_name(swarm: str) -> str:
    """One tmux server per swarm, so ``kill-server`` or a crash never touches a user's own tmux."""
    return f"swarmq-{swarm}"


@dataclass(frozen=True)
class PaneState:
    pid: int
    dead: bool
    exit_status: int | None


class TmuxHost:
    """The swarm's tmux server."""

    def __init__(self, swarm: str) -> None:
        self.socket = socket_name(swarm)
        self.server = libtmux.Server(socket_name=self.socket)

    def _cmd(self, *args: str) -> list[str]:
        result = self.server.cmd(*args)
        if result.stderr:
            raise RuntimeError(f"tmux -L {self.socket} {' '.join(args)}: {' '.join(result.stderr)}")
        return list(result.stdout)

    def has(self, session: str) -> bool:
        try:
            return bool(self.server.has_session(session, exact=True))
        except LibTmuxException:
            return False

    def sessions(self) -> list[str]:
        try:
            return self._cmd("list-sessions", "-F", "#{session_name}")
        except RuntimeError:
            return []  # no server running: no sessions

    def pane(self, session: str) -> PaneState | None:
        if not self.has(session):
            return None
        lines = self._cmd(
            "list-panes", "-t", f"={session}:", "-F", "#{pane_pid} #{pane_dead} #{pane_dead_status}"
        )
        if not lines:
            return None
        pid, dead, *status = lines[0].split(" ")
        code = int(status[0]) if status and status[0].lstrip("-").isdigit() else None
        return PaneState(int(pid), dead == "1", code)

    def start(
        self,
        session: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        log_file: Path,
    ) -> PaneState:
        """Run ``argv`` (exec'd, so the pane pid is the process) in a new detached session."""
        # Create the session idle, make its pane survive its process, attach the log, and only
        # then exec the real command: a process that dies at once still leaves its output.
        target = f"={session}:"
        self._cmd("new-session", "-d", "-s", session, "-x", "220", "-y", "50", "-c", str(cwd))
        self._cmd("set-option", "-p", "-t", target, "remain-on-exit", "on")
        log_file.parent.mkdir(parents=True, exist_ok=True)
        self._cmd("pipe-pane", "-o", "-t", target, shlex.join(logpipe.command(log_file)))
        args = ["respawn-pane", "-k", "-t", target, "-c", str(cwd)]
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        args.append("exec " + shlex.join(argv))
        self._cmd(*args)
        state = self.pane(session)
        if state is None:
            raise RuntimeError(f"tmux session {session} vanished right after it was created")
        return state

    def kill(self, session: str) -> bool:
        if not self.has(session):
            return False
        try:
            self._cmd("kill-session", "-t", f"={session}")
        except RuntimeError:
            return False
        return True

    def capture(self, session: str, lines: int = 40) -> str:
        if not self.has(session):
            return ""
        return "\n".join(self._cmd("capture-pane", "-p", "-t", f"={session}:", "-S", f"-{lines}"))
