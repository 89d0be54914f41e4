"""The hook server with the CLI's reading commands: ``python -m swarmq.cli.served --config FILE``.

This is the program the hooks start (``swarmq.hooks.client.start_server``): the hook server of
``swarmq.hooks.server`` plus one request kind, ``cli``, by which a fresh ``swarmq`` process
(``swarmq.cli.resident``) has a reading command run here, on the roster, locks and stores the
server keeps warm. The command is the CLI's own (the same typer application, options, checks,
rendering and exit statuses); only its ``load`` and ``workspace`` return the warm objects
(``CliState.warm``), and what it writes to stdout and stderr is caught per request thread
(:class:`_Stream`) and sent back in order with its exit status.

A request is declined, and the asker runs the command itself, when it names another roster
file, the roster changed since the server loaded it, the variables that shape the answer differ
(:func:`swarmq.hooks.resident.differences`), the installed code differs, or it is not one of the
served commands. It lives in the CLI layer, which the hooks may not import: the hooks start it
by its module name, as a program.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import sys
import threading
import traceback
from typing import Any

from swarmq.cli.resident import command_of
from swarmq.cli.state import CliState, Warm
from swarmq.hooks.resident import code_stamp, differences
from swarmq.hooks.server import HookService
from swarmq.hooks.server import main as server_main

OP = "cli"
MAX_STDIN = 16 << 20
STAMP = code_stamp()
"""The installation this server was started from (not the files on disk now)."""

_local = threading.local()


def _chunks() -> list[list[Any]] | None:
    chunks: list[list[Any]] | None = getattr(_local, "chunks", None)
    return chunks


class _Stream(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` of the server: while a request thread runs a command,
    what it writes is kept for the asker (with which stream, in order); otherwise it goes to
    the process's own stream. A caught stream is not a terminal and is UTF-8, as the asker's
    are when it asks (it asks only when none is a terminal)."""

    def __init__(self, number: int, original: Any) -> None:
        super().__init__()
        self.number = number
        self.original = original

    def write(self, text: str) -> int:
        chunks = _chunks()
        if chunks is None:
            written: int = self.original.write(text)
            return written
        if chunks and chunks[-1][0] == self.number:
            chunks[-1][1] += text
        else:
            chunks.append([self.number, text])
        return len(text)

    def flush(self) -> None:
        if _chunks() is None:
            self.original.flush()

    def isatty(self) -> bool:
        return False if _chunks() is not None else bool(self.original.isatty())

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8" if _chunks() is not None else str(self.original.encoding)

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return "strict" if _chunks() is not None else self.original.errors

    def fileno(self) -> int:
        if _chunks() is not None:
            raise io.UnsupportedOperation("a caught stream has no descriptor")
        return int(self.original.fileno())


class _Input(io.TextIOBase):
    """``sys.stdin`` of the server: the asker's input (``--error -``) while its command runs."""

    def __init__(self, original: Any) -> None:
        super().__init__()
        self.original = original

    def read(self, size: int | None = -1) -> str:
        text: io.StringIO | None = getattr(_local, "stdin", None)
        if text is None:
            return str(self.original.read() if size is None or size < 0 else "")
        return text.read(size)

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False


class _Logs(logging.Handler):
    """The server's log handler. A record logged while a request thread runs a command is
    written to that command's stderr as a command run in its own process writes it (Python's
    last-resort handler: the message alone, warnings and worse); any other goes to the server's
    own stderr with its level and logger."""

    def __init__(self, original: Any) -> None:
        super().__init__(logging.WARNING)
        self.original = original
        self.server_format = logging.Formatter(logging.BASIC_FORMAT)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if _chunks() is not None:
                sys.stderr.write(logging.Formatter().format(record) + "\n")
            else:
                self.original.write(self.server_format.format(record) + "\n")
                self.original.flush()
        except Exception:
            self.handleError(record)


def install_streams() -> None:
    """Replace the process's standard streams by per-thread catching ones (once)."""
    root = logging.getLogger()
    if not any(isinstance(h, _Logs) for h in root.handlers):
        root.addHandler(_Logs(sys.stderr))  # before the server's basicConfig, which then adds none
    if not isinstance(sys.stdout, _Stream):
        sys.stdout = _Stream(1, sys.stdout)
    if not isinstance(sys.stderr, _Stream):
        sys.stderr = _Stream(2, sys.stderr)
    if not isinstance(sys.stdin, _Input):
        sys.stdin = _Input(sys.stdin)


def declined(service: HookService, message: dict[str, Any]) -> str | None:
    """Why this server must not run the request's command (None: it may)."""
    argv, env = message.get("argv"), message.get("env")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return "no command"
    if command_of(argv) is None or argv[0].startswith("-"):
        return f"not a served command: {' '.join(argv[:2])}"
    if message.get("config") != str(service.config):
        return f"this server answers for {service.config}"
    try:
        if service.config.stat().st_mtime_ns != service.config_mtime:
            return f"{service.config} changed since the server loaded it"
    except OSError as exc:
        return f"{service.config}: {exc}"
    if message.get("code") != STAMP:
        return "another installation of swarmq"
    if not isinstance(env, dict):
        return "no environment"
    different = differences(env, os.environ)
    if different:
        return f"environment differs: {', '.join(different)}"
    stdin = message.get("stdin")
    if stdin is not None and (not isinstance(stdin, str) or len(stdin) > MAX_STDIN):
        return "input too large"
    return None


_COMMAND: Any = None


def _command() -> Any:
    global _COMMAND
    if _COMMAND is None:
        import typer

        from swarmq.cli.root import app

        _COMMAND = typer.main.get_command(app)
    return _COMMAND


def answer(service: HookService, message: dict[str, Any]) -> dict[str, Any]:
    """Run the asked command on the warm stores (or decline): ``{"out": [[1 | 2, text], ...],
    "exit": status}``, ``{"declined": why}``, or ``{"failed": why}`` when it raised (a bug:
    the asker is told, and runs it itself only if it records nothing)."""
    why = declined(service, message)
    if why is not None:
        return {"declined": why}
    stdin = message.get("stdin")
    prog = message.get("prog")
    state = CliState(service.config, Warm(service.roster, service.locks, service.stores))
    chunks: list[list[Any]] = []
    _local.chunks = chunks
    _local.stdin = io.StringIO(stdin if isinstance(stdin, str) else "")
    try:
        try:
            _command().main(
                args=list(message["argv"]),
                prog_name=prog if isinstance(prog, str) and prog else "swarmq",
                standalone_mode=True,
                obj=state,
            )
            code: object = 0
        except SystemExit as exc:
            code = exc.code
    except Exception as exc:
        _local.chunks = None
        service.note(f"server: cli {message['argv'][:2]}: {traceback.format_exc()}")
        return {"failed": f"{type(exc).__name__}: {exc}"}
    finally:
        _local.chunks = None
        _local.stdin = None
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, status 1
        chunks.append([2, f"{code}\n"])
        code = 1
    return {"out": chunks, "exit": code}


def preload() -> None:
    """Import the served commands now, with the warm-up, not in the first asker's time."""
    commands = _command().commands
    for name in ("knowledge", "lookup"):
        commands[name]


def _leave(signum: int, frame: object) -> None:
    sys.exit(0)  # the server's cleanup runs: no socket is left for the next asker to try


def main(argv: list[str] | None = None) -> None:
    install_streams()
    preload()
    signal.signal(signal.SIGTERM, _leave)
    server_main(argv, prog="python -m swarmq.cli.served", handlers={OP: answer})


if __name__ == "__main__":
    main()
