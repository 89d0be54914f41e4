"""``swarmq-hook <agent> [<event>]``: the command Claude Code and Codex run at each hook event.

It must return at once and never fail the agent's session, so it imports only the standard
library, and the least of it (no ``typing``, ``pathlib``, ``json`` or ``contextlib``: paths as
strings, :mod:`swarmq.storage.statedir`; the spool only for a transcript to forge; no CLI, no
roster, no knowledge store, no Celery), and always exits 0; whatever goes wrong is written to
the swarm's hook log (``<state>/hooks.log``).

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

import os
import sys
import time

from swarmq.hooks._wire import log, request, socket_file
from swarmq.hooks.events import AGENTS, Agent, HookCall, parse, reply
from swarmq.storage.statedir import child, expanded, pure, swarm_state_path

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

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
    found = config_file(cwd)
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def config_file(cwd: str | None) -> str | None:
    """:func:`find_config` as a string, spelled as ``pathlib`` spells it."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        path = expanded(explicit)
        return path if os.path.isfile(path) else None
    start = pure(cwd) if cwd else pure(os.getcwd())
    for directory in (start, *parents(start)):
        candidate = child(directory, CONFIG_NAME)
        if os.path.isfile(candidate):
            return candidate
    return None


def parents(path: str) -> list[str]:
    """``PurePosixPath(path).parents`` as strings, nearest first (``path`` spelled by
    :func:`swarmq.storage.statedir.pure`)."""
    root = "//" if path[:2] == "//" and path[2:3] != "/" else "/" if path[:1] == "/" else ""
    parts = [p for p in path[len(root) :].split("/") if p and p != "."]
    return [root + "/".join(parts[:k]) or "." for k in range(len(parts) - 1, -1, -1)]


def _float_env(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def start_server(config: Path | str, state: Path | str) -> bool:
    """Start the swarm's hook server in the background unless one was started moments ago;
    returns whether this call started it."""
    from pathlib import Path  # here: only a hook that finds no server pays for it

    state = Path(state)
    state.mkdir(parents=True, exist_ok=True)
    marker = state / "server.spawn"
    try:
        if time.time() - marker.stat().st_mtime < SPAWN_GRACE:
            return False
        os.unlink(marker)
    except FileNotFoundError:
        pass
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
    config: Path | str,
    state: Path | str,
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
    sock = socket_file(state)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if os.path.exists(sock):
            answer = request(state, message, timeout)
            if answer is not None:
                return answer
    return None


def handle(call: HookCall, config: Path | str) -> str:
    """Do what ``call`` asks; returns what to print."""
    state = swarm_state_path(config)
    message: dict[str, Any] = {
        "agent": call.agent,
        "event": call.event,
        "session_id": call.session_id,
    }
    if call.action == "forge":
        from swarmq.storage.spool import Spool  # here: only a transcript to forge needs it

        spool = Spool(child(state, "spool"))
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
    config = config_file(call.cwd)
    if config is None:
        return ""  # no swarm here
    return handle(call, config)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: never raises, always exits 0."""
    args = sys.argv[1:] if argv is None else argv
    state: str | None = None
    try:
        stdin = sys.stdin.buffer.read(MAX_STDIN)
        out = run(args, stdin)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # a hook never fails the session: log and exit 0
        try:
            config = config_file(None)
            state = swarm_state_path(config) if config else None
        except Exception:
            pass
        text = f"hook {' '.join(args)} failed: {type(exc).__name__}: {exc}"
        if state is None or not log(state, text):  # no log to write to: the agent's stderr
            try:  # noqa: SIM105 (no contextlib: every hook call would import it)
                sys.stderr.write(f"swarmq-hook: {text}\n")
            except Exception:
                pass
    sys.exit(0)
