"""``swarmq-hook <agent> [<event>]``: the command Claude Code and Codex run at each hook event.

It must return at once and never fail the agent's session, so it imports only the standard
library and the spool (no CLI, no roster, no knowledge store, no Celery) and always exits 0;
whatever goes wrong is written to the swarm's hook log (``<state>/hooks.log``).

- ``Stop``, ``SubagentStop``, ``PreCompact``, ``SessionEnd``: the transcript is written to the
  swarm's spool (fsync'd) and the hook server is asked to send it on; a worker drains the spool
  too, so with Redis, the server or every worker down nothing is lost, only delayed.
- ``SessionStart``, ``UserPromptSubmit``, a failing tool call: one request to the swarm's hook
  server, a long-lived process that keeps the roster and the knowledge store loaded; its answer
  (``additionalContext`` carrying the injection's trace id) is printed. With no server running
  one is started in the background; the session start waits for it a few seconds (the
  :data:`WAIT_ENV` budget), the others stay silent this once.

The swarm is the ``swarm.yaml`` in ``$SWARMQ_CONFIG``, else the nearest one above the event's
``cwd``; without one the hook does nothing. Inside a mission (``$SWARMQ_MISSION_ID`` set by the
runner) it does nothing either: the mission's prompt carries the knowledge and the mission forges
the agent's session itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from swarmq.hooks._wire import log, request, socket_path
from swarmq.hooks.events import AGENTS, Agent, HookCall, parse, reply
from swarmq.storage.spool import Spool
from swarmq.storage.statedir import swarm_state_dir

CONFIG_ENV = "SWARMQ_CONFIG"
CONFIG_NAME = "swarm.yaml"
WAIT_ENV = "SWARMQ_HOOK_WAIT"
MISSION_ENV = "SWARMQ_MISSION_ID"
"""Set in the environment of a mission's agent run: its hooks stand aside (no double injection,
no second forge of the session the mission forges itself)."""
TIMEOUT_ENV = "SWARMQ_HOOK_TIMEOUT"
DEFAULT_WAIT = 8.0
"""Seconds a session start waits for a hook server it had to start (one warm-up per boot)."""
DEFAULT_TIMEOUT = 5.0
"""Seconds a hook waits for the server's answer before going silent."""
SPAWN_GRACE = 60.0
"""A server start younger than this is not repeated by the next hook."""
POKE_TIMEOUT = 1.0
"""Seconds a stop hook waits for the server to take note of new spool records."""
MAX_STDIN = 16 << 20
SERVER_MODULE = "swarmq.cli.served"
"""The server's program: the hook server with the CLI's reading commands (a fresh ``swarmq
knowledge search`` asks it too). Named, not imported: the hooks sit below the CLI, and this
starts a process."""


def find_config(cwd: str | None) -> Path | None:
    """``$SWARMQ_CONFIG``, else the nearest ``swarm.yaml`` above ``cwd`` (or this process's)."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        return path if path.is_file() else None
    start = Path(cwd) if cwd else Path.cwd()
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def _float_env(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def start_server(config: Path, state: Path) -> bool:
    """Start the swarm's hook server in the background unless one was started moments ago;
    returns whether this call started it."""
    state.mkdir(parents=True, exist_ok=True)
    marker = state / "server.spawn"
    with contextlib.suppress(FileNotFoundError):
        if time.time() - marker.stat().st_mtime < SPAWN_GRACE:
            return False
        os.unlink(marker)
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False  # another hook won the race
    os.close(fd)
    import subprocess  # here: only the hook that starts the server pays for it

    # -P: the server imports the swarmq this hook runs, not a source tree in the session's
    # directory (`python -m` puts the working directory first on sys.path): from a clone of
    # swarmq with a regular install, it would run the clone's code, whose stamp differs, and
    # decline every command it is asked (swarmq.cli.served).
    with (state / "server.log").open("ab") as out:
        subprocess.Popen(
            [sys.executable, "-P", "-m", SERVER_MODULE, "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    return True


def ask(
    config: Path,
    state: Path,
    message: dict[str, Any],
    *,
    wait: float,
    timeout: float | None = None,
) -> dict[str, Any] | None:
    """The server's answer to ``message``; starts a server when none answers and, within
    ``wait`` seconds, asks it again once it listens."""
    timeout = _float_env(TIMEOUT_ENV, DEFAULT_TIMEOUT) if timeout is None else timeout
    answer = request(state, message, timeout)
    if answer is not None:
        return answer
    start_server(config, state)
    deadline = time.monotonic() + wait
    sock = socket_path(state)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if sock.exists():
            answer = request(state, message, timeout)
            if answer is not None:
                return answer
    return None


def handle(call: HookCall, config: Path) -> str:
    """Do what ``call`` asks; returns what to print."""
    state = swarm_state_dir(config)
    message: dict[str, Any] = {
        "agent": call.agent,
        "event": call.event,
        "session_id": call.session_id,
    }
    if call.action == "forge":
        spool = Spool(state / "spool")
        for path in call.transcripts():
            spool.put({**message, "transcript_path": path, "cwd": call.cwd, "at": time.time()})
        if call.transcripts():
            ask(config, state, {**message, "op": "drain"}, wait=0.0, timeout=POKE_TIMEOUT)
        return ""
    if call.action == "failure":
        text = call.failure_text()
        if text is None:
            return ""  # a successful call (Codex reports every call): nothing to look up
        message.update(op="failure", text=text)
    elif call.action == "prompt":
        message.update(op="prompt", text=call.prompt())
    else:
        message.update(op="session-start")
    wait = _float_env(WAIT_ENV, DEFAULT_WAIT) if call.action == "session-start" else 0.0
    answer = ask(config, state, message, wait=wait)
    if answer is None:
        log(state, f"{call.agent} {call.event}: no hook server answered; silent")
        return ""
    if answer.get("error"):
        log(state, f"{call.agent} {call.event}: server error: {answer['error']}")
    context = answer.get("context")
    return reply(call.event, context if isinstance(context, str) else None)


def run(argv: list[str], stdin: bytes) -> str:
    """The hook for ``argv`` (``<agent> [<event>]``) given its stdin; what to print."""
    agent_name = argv[0] if argv else ""
    if agent_name not in AGENTS:
        raise ValueError(f"unknown agent {agent_name!r}; one of {', '.join(AGENTS)}")
    agent: Agent = "codex" if agent_name == "codex" else "claude-code"
    if os.environ.get(MISSION_ENV):
        return ""  # a mission's own agent: the mission injects, acknowledges and forges
    call = parse(agent, stdin, argv[1] if len(argv) > 1 else None)
    if call.action is None:
        return ""
    config = find_config(call.cwd)
    if config is None:
        return ""  # no swarm here
    return handle(call, config)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: never raises, always exits 0."""
    args = sys.argv[1:] if argv is None else argv
    state: Path | None = None
    try:
        stdin = sys.stdin.buffer.read(MAX_STDIN)
        out = run(args, stdin)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # a hook never fails the session: log and exit 0
        with contextlib.suppress(Exception):
            config = find_config(None)
            state = swarm_state_dir(config) if config else None
        text = f"hook {' '.join(args)} failed: {type(exc).__name__}: {exc}"
        if state is None or not log(state, text):  # no log to write to: the agent's stderr
            with contextlib.suppress(Exception):
                sys.stderr.write(f"swarmq-hook: {text}\n")
    sys.exit(0)
