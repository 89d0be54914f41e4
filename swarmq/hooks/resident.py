"""Asking the swarm's resident server from a fresh process, for a caller that must still give
the answer it would have computed itself (the CLI's reading commands).

A hook may go silent when no server answers; a command may not, and it may not answer
differently either. So a caller learns here whether its request ever reached a server
(:class:`Exchange`: not sent, it computes locally; sent and lost, it must not repeat a command
that records), and both sides agree on an :func:`environment` fingerprint: the variables that
change what a command loads or prints (the roster's ``${VAR}`` references, ``HOME`` and the XDG
directories, ``SWARMQ_*``, the session ids a lookup cites, what Rich and typer read for colour
and width). A server whose own environment differs declines, and the caller computes locally.

Standard library only: a fresh ``swarmq`` process imports this before typer (and no
``socket`` or ``typing``: see :mod:`swarmq.hooks._wire`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path

from swarmq.hooks._wire import decode, read_line, socket_path, unix_socket

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MAX_ANSWER = 256 << 20
"""A search's whole table can be long; an answer cut short is an answer lost."""

FIXED_NAMES = (
    "HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "CLAUDE_SESSION_ID",
    "CODEX_SESSION_ID",
    "COLUMNS",
    "LINES",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "PY_COLORS",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERMINAL_WIDTH",
    "GITHUB_ACTIONS",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
)
"""Variables read below the roster (the hive's default directory, the state and cache roots,
the session a lookup cites) or by Rich and typer when they print."""

IGNORED = frozenset({"SWARMQ_CONFIG", "SWARMQ_LOCAL", "SWARMQ_RESIDENT_TIMEOUT"})
"""Said by the request itself (the roster's path) or only about how to ask."""

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")


def environment(config_text: str, environ: Mapping[str, str]) -> dict[str, str | None]:
    """The variables a command's answer may depend on, with their values (None: unset)."""
    names = {*FIXED_NAMES, *_REFERENCE.findall(config_text)}
    names.update(n for n in environ if n.startswith(("SWARMQ_", "_TYPER_")))
    return {name: environ.get(name) for name in sorted(names - IGNORED)}


def differences(asked: Mapping[str, object], environ: Mapping[str, str]) -> list[str]:
    """The names whose value the asker has and ``environ`` has not (or the other way round),
    among those the asker sent and the ones :func:`environment` would add on this side."""
    names = set(asked) | {n for n in environ if n.startswith(("SWARMQ_", "_TYPER_"))}
    return sorted(n for n in names - IGNORED if asked.get(n) != environ.get(n))


class Exchange:
    """How a request went: ``sent`` once its last byte was written (the server may have acted
    on it, whatever became of the answer); ``answer`` None when none came back whole. (A plain
    class: ``dataclasses`` imports ``inspect``, a tenth of this path's import time.)"""

    __slots__ = ("answer", "sent")

    def __init__(self, sent: bool, answer: dict[str, Any] | None) -> None:
        self.sent = sent
        self.answer = answer


def exchange(
    state: Path, message: dict[str, Any], *, connect_timeout: float, timeout: float
) -> Exchange:
    """Send ``message`` to the server listening in ``state`` and read its one-line answer:
    ``connect_timeout`` seconds to be taken, then ``timeout`` for the whole answer."""
    sent = False
    try:
        with contextlib.closing(unix_socket()) as conn:
            conn.settimeout(connect_timeout)
            conn.connect(str(socket_path(state)))
            conn.settimeout(timeout)
            deadline = time.monotonic() + timeout
            conn.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            sent = True
            answer = read_line(conn, deadline, MAX_ANSWER, 1 << 20)
    except (OSError, UnicodeEncodeError):  # no socket, refused, timed out; unencodable text
        return Exchange(sent, None)
    return Exchange(sent, decode(answer))


def timeout_from(environ: Mapping[str, str], default: float) -> float:
    try:
        return float(environ.get("SWARMQ_RESIDENT_TIMEOUT", default))
    except ValueError:
        return default


def exists(state: Path) -> bool:
    """Whether a server's socket is there at all (no socket: nothing to try)."""
    return os.path.exists(socket_path(state))


def code_stamp() -> str:
    """Which installation of swarmq this process runs (its package's path and the time its
    files were written): a server started before an upgrade, or from another environment,
    declines rather than answer with other code."""
    package = Path(__file__).resolve().parent.parent
    try:
        written = (package / "__init__.py").stat().st_mtime_ns
    except OSError:
        written = 0
    return f"{package}:{written}"
