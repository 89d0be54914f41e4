"""Asking the swarm's resident server to run a reading command, from a fresh ``swarmq`` process.

A hook or an agent that runs ``swarmq knowledge search`` on every step pays, in a fresh process,
for typer, the roster, numpy, the index and the embedding model before the first result
(hundreds of milliseconds under MiniLM); the hook server (``swarmq.cli.served``) already holds
them. So, before typer is imported, :func:`answered` hands ``knowledge search``, ``knowledge
inject``, ``knowledge recall`` and ``lookup`` to that server when one listens for this swarm: it
runs the very same command on its warm stores and sends back what the command wrote to stdout
and stderr, in order, and its exit status; this process writes them and exits. The answer is the
one this process would have computed (the server declines when the roster file, the environment
that shapes the answer, or the installed code differ; :mod:`swarmq.hooks.resident`).

It is only offered when no standard stream is a terminal (a command run by a program: a hook, an
agent, a script), since a terminal's width and colours are this process's to know; and never
with ``SWARMQ_LOCAL=1``. With no server, or one that declines, the command runs here as always.
A command that records (``inject`` or ``recall`` without ``--preview``, ``lookup`` without
``--no-cite``) whose request reached the server but whose answer was lost is not run again here
(it may have been recorded): it fails, saying so.

Standard library only, and no ``typing`` (nor ``socket``, ``json``, ``re`` or ``pathlib``:
:mod:`swarmq.hooks._wire`), down to the package's own ``__init__``: a fresh process pays for
every module imported before its first byte.
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from types import ModuleType

LOCAL_ENV = "SWARMQ_LOCAL"
CONFIG_ENV = "SWARMQ_CONFIG"
DEFAULT_CONFIG = "swarm.yaml"
CONNECT_TIMEOUT = 0.5
DEFAULT_TIMEOUT = 300.0
"""Seconds to wait for the whole answer once the server has the request (a 1M search from a
cold page cache takes seconds)."""
SERVED = frozenset({("knowledge", "search"), ("knowledge", "inject"), ("knowledge", "recall")})
SERVED_TOP = frozenset({"lookup"})


def command_of(argv: list[str]) -> tuple[str | None, list[str]] | None:
    """The ``--config`` given before the command (None: not given) and the command's words,
    when ``argv`` runs a served command; None otherwise."""
    config: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-c", "--config"):
            if i + 1 >= len(argv):
                return None
            config = argv[i + 1]
            i += 2
        elif arg.startswith("--config="):
            config = arg.removeprefix("--config=")
            i += 1
        elif arg.startswith("-c") and not arg.startswith("--"):
            config = arg[2:]
            i += 1
        else:
            break
    rest = argv[i:]
    if not rest or rest[0].startswith("-"):
        return None
    served = rest[0] in SERVED_TOP or (len(rest) > 1 and (rest[0], rest[1]) in SERVED)
    if not served or "--help" in rest:
        return None
    return config, rest


def records(rest: list[str]) -> bool:
    """Whether the command writes what it showed (receipts, counters, citations)."""
    if rest[0] == "lookup":
        return "--no-cite" not in rest
    return rest[1] != "search" and "--preview" not in rest


def program_name() -> str:
    """The name click shows in usage lines (its ``_detect_program_name``, the same rule)."""
    main: ModuleType | None = sys.modules.get("__main__")
    path = sys.argv[0] if sys.argv else ""
    package = getattr(main, "__package__", None)
    if package in (None, ""):
        return os.path.basename(path)
    name = os.path.splitext(os.path.basename(path))[0]
    module = str(package) if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"


def _terminal() -> bool:
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.isatty():
                return True
        except (AttributeError, ValueError):
            return True
    return False


def answered(argv: list[str]) -> int | None:
    """Have the resident server run ``argv``'s command and write its output here; its exit
    status, or None when this process must run the command itself."""
    if os.environ.get(LOCAL_ENV, "") not in ("", "0"):
        return None
    parsed = command_of(argv)
    if parsed is None or _terminal():
        return None
    from swarmq.hooks.resident import code_stamp, environment, exchange, exists, timeout_from
    from swarmq.storage.statedir import expanded, swarm_state_path  # here: others import neither

    given, rest = parsed
    named = given if given is not None else os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG
    try:
        config = os.path.realpath(expanded(named))  # Path(named).expanduser().resolve()
        with open(config, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError, RuntimeError):
        return None  # no roster there: the command says so itself
    state = swarm_state_path(config)
    if not exists(state):
        return None
    stdin = sys.stdin.read() if any(a == "-" or a.endswith("=-") for a in rest) else None
    message = {
        "op": "cli",
        "argv": rest,
        "config": config,
        "prog": program_name(),
        "env": environment(text, os.environ),
        "code": code_stamp(),
        "stdin": stdin,
    }
    timeout = timeout_from(os.environ, DEFAULT_TIMEOUT)
    sent = exchange(state, message, connect_timeout=CONNECT_TIMEOUT, timeout=timeout)
    answer = sent.answer
    out = answer.get("out") if answer is not None else None
    if answer is not None and isinstance(out, list) and "exit" in answer:
        for stream, chunk in out:
            target = sys.stdout if stream == 1 else sys.stderr
            target.write(chunk)
            target.flush()
        code = answer["exit"]
        return code if isinstance(code, int) else 1
    ran = sent.sent if answer is None else "failed" in answer  # else declined: never ran
    if ran and records(rest):
        return _lost("the resident server took it and its answer was lost")
    if stdin is not None:  # read once, for the command run here now
        sys.stdin = io.StringIO(stdin)
    return None


def _lost(why: str) -> int:
    sys.stderr.write(
        f"error: {why}; not run again here, so nothing is recorded twice "
        f"({LOCAL_ENV}=1 runs it in this process)\n"
    )
    return 1
