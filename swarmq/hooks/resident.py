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
``socket``, ``typing``, ``json``, ``re``, ``pathlib`` or ``contextlib``: see
:mod:`swarmq.hooks._wire`).
"""

from __future__ import annotations

import os
import time

from swarmq.hooks._leanjson import dumps
from swarmq.hooks._wire import decode, read_line, socket_file, unix_socket

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
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

_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NEXT = _FIRST | frozenset("0123456789")


def references(text: str) -> list[str]:
    r"""The names of the roster's ``${NAME`` references: what ``re.findall(r"\$\{([A-Za-z_]
    [A-Za-z0-9_]*)", text)`` finds, without ``re`` (3-5 ms of a fresh process)."""
    names: list[str] = []
    at = text.find("${")
    while at >= 0:
        end = at + 2
        if end < len(text) and text[end] in _FIRST:
            end += 1
            while end < len(text) and text[end] in _NEXT:
                end += 1
            names.append(text[at + 2 : end])
            at = text.find("${", end)
        else:
            at = text.find("${", at + 1)
    return names


def environment(config_text: str, environ: Mapping[str, str]) -> dict[str, str | None]:
    """The variables a command's answer may depend on, with their values (None: unset)."""
    names = {*FIXED_NAMES, *references(config_text)}
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
    state: Path | str, message: dict[str, Any], *, connect_timeout: float, timeout: float
) -> Exchange:
    """Send ``message`` to the server listening in ``state`` and read its one-line answer:
    ``connect_timeout`` seconds to be taken, then ``timeout`` for the whole answer."""
    sent = False
    try:
        conn = unix_socket()
        try:
            conn.settimeout(connect_timeout)
            conn.connect(socket_file(state))
            conn.settimeout(timeout)
            deadline = time.monotonic() + timeout
            conn.sendall(dumps(message).encode("utf-8") + b"\n")
            sent = True
            answer = read_line(conn, deadline, MAX_ANSWER, 1 << 20)
        finally:
            conn.close()
    except (OSError, UnicodeEncodeError):  # no socket, refused, timed out; unencodable text
        return Exchange(sent, None)
    return Exchange(sent, decode(answer))


def timeout_from(environ: Mapping[str, str], default: float) -> float:
    try:
        return float(environ.get("SWARMQ_RESIDENT_TIMEOUT", default))
    except ValueError:
        return default


def exists(state: Path | str) -> bool:
    """Whether a server's socket is there at all (no socket: nothing to try)."""
    return os.path.exists(socket_file(state))


def code_stamp() -> str:
    """Which installation of swarmq this process runs (its package's path and the time its
    files were written): a server started before an upgrade, or from another environment,
    declines rather than answer with other code."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    try:
        written = os.stat(os.path.join(package, "__init__.py")).st_mtime_ns
    except OSError:
        written = 0
    return f"{package}:{written}"
