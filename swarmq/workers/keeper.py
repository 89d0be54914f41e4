"""Keeps one long-running process alive: restarts it when it exits on its own, with backoff.

``swarmq up`` runs every worker and the beat under this keeper (in its tmux pane, or as the
plain background child), so a worker that dies for any reason (kombu's "Unrecoverable error",
an OOM kill, a crash in a C extension) comes back without an operator: the broker's own
reconnection covers a connection that drops, the keeper covers a process that ends.

* **What ends supervision.** A signal to the keeper (``swarmq down`` sends SIGTERM): it is
  forwarded to the process, whose exit the keeper waits for and then shares, so a Celery warm
  shutdown is still a warm shutdown. An exit with status 0 is a deliberate stop (Celery's remote
  ``shutdown`` from ``down --all``, the beat leaving when asked): the keeper exits too.
* **Backoff.** Restart *n* in a row waits ``min(backoff_max, backoff_first * 2**(n-1))``
  seconds; a process that ran ``stable`` seconds before it died starts the count again, so a
  crash loop is throttled while a rare crash is repaired at once.
* **State.** ``--state`` names a JSON file rewritten (atomically) at every start and exit:
  the child's pid, how many restarts, the last exit and when; ``swarmq status`` shows it.

Standalone (standard library only), so it runs by path from any Python, as the log pipe does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
STABLE_SECONDS = 60.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe_exit(status: int) -> str:
    """``exit 1`` or ``signal 9 (SIGKILL)`` for a ``Popen.returncode``."""
    if status >= 0:
        return f"exit {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = "?"
    return f"signal {-status} ({name})"


def backoff(consecutive: int, first: float = BACKOFF_FIRST, ceiling: float = BACKOFF_MAX) -> float:
    """Seconds before restart number ``consecutive`` (1-based) of an unbroken run of crashes."""
    return float(min(ceiling, first * 2 ** max(0, consecutive - 1)))


def read_state(path: Path) -> dict[str, Any]:
    """The keeper's last state (empty when it never wrote one or it is unreadable)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Keeper:
    def __init__(
        self,
        argv: list[str],
        state: Path,
        *,
        backoff_first: float = BACKOFF_FIRST,
        backoff_max: float = BACKOFF_MAX,
        stable: float = STABLE_SECONDS,
    ) -> None:
        self.argv = argv
        self.state_path = state
        self.backoff_first = backoff_first
        self.backoff_max = backoff_max
        self.stable = stable
        self.state: dict[str, Any] = {
            "keeperPid": os.getpid(),
            "command": argv,
            "restarts": 0,
            "lastExit": None,
            "lastExitAt": None,
        }
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = threading.Event()
        self.stop_signal = signal.SIGTERM

    def _write(self, **changes: Any) -> None:
        self.state.update(changes)
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_name(f".{self.state_path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.state, indent=2), "utf-8")
        os.replace(tmp, self.state_path)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        # SIGHUP (tmux closing the pane) and SIGINT stop it as SIGTERM does: a warm shutdown.
        self.stop_signal = signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM
        self.stopping.set()
        child = self.child
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(self.stop_signal)

    def run(self) -> int:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_signal)
        consecutive = 0
        while True:
            started = time.monotonic()
            self.child = subprocess.Popen(self.argv)
            self._write(childPid=self.child.pid, startedAt=_now(), nextStartAt=None)
            if self.stopping.is_set():  # a signal that came while it was being started
                self.child.send_signal(self.stop_signal)
            status = self.child.wait()
            ran = time.monotonic() - started
            self._write(childPid=None, lastExit=describe_exit(status), lastExitAt=_now())
            if self.stopping.is_set() or status == 0:
                return status if status >= 0 else 128 - status
            consecutive = 1 if ran >= self.stable else consecutive + 1
            delay = backoff(consecutive, self.backoff_first, self.backoff_max)
            self._write(
                restarts=int(self.state["restarts"]) + 1,
                nextStartAt=datetime.fromtimestamp(time.time() + delay, UTC)
                .isoformat(timespec="milliseconds")
                .replace("+00:00", "Z"),
            )
            print(
                f"swarmq keeper: {' '.join(self.argv[:4])} … ended with {describe_exit(status)} "
                f"after {ran:.1f}s; restart {self.state['restarts']} in {delay:.1f}s",
                file=sys.stderr,
                flush=True,
            )
            if self.stopping.wait(delay):
                return 0


def command(state: Path, argv: list[str]) -> list[str]:
    """The argv that runs ``argv`` under a keeper writing ``state``."""
    return [sys.executable, str(Path(__file__).resolve()), "--state", str(state), "--", *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--backoff-first", type=float, default=None)
    parser.add_argument("--backoff-max", type=float, default=None)
    parser.add_argument("--stable", type=float, default=STABLE_SECONDS)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    child = list(args.command)
    if child[:1] == ["--"]:
        child = child[1:]
    if not child:
        parser.error("no command to keep")
    first = args.backoff_first
    if first is None:
        first = float(os.environ.get("SWARMQ_KEEPER_BACKOFF_FIRST") or BACKOFF_FIRST)
    ceiling = args.backoff_max
    if ceiling is None:
        ceiling = float(os.environ.get("SWARMQ_KEEPER_BACKOFF_MAX") or BACKOFF_MAX)
    keeper = Keeper(child, args.state, backoff_first=first, backoff_max=ceiling, stable=args.stable)
    return keeper.run()


if __name__ == "__main__":
    sys.exit(main())
