"""Where swarmq keeps a swarm's per-user state on this host: the hooks' spool, the resident
server's socket, its logs.

Under ``$SWARMQ_STATE`` (default ``$XDG_STATE_HOME/swarmq``, else ``~/.local/state/swarmq``), in
a directory named after the resolved path of the swarm's ``swarm.yaml``, so a hook or a fresh
``swarmq`` process (which know the roster's path, not its content) and the processes that load
the roster agree on it without reading anything. Apart from the spool because a fresh process
asking the resident server needs this and nothing else of storage: standard library only, no
``typing`` and no ``pathlib`` (a fresh process pays for every import before its first byte:
``pathlib`` brings ``re``, ``fnmatch``, ``urllib.parse`` and ``ipaddress``, 2-4 ms). The paths
are computed as strings, spelled exactly as ``pathlib`` spells them (:func:`pure`); the
functions that return a ``Path`` import it when called.
"""

from __future__ import annotations

import os

from swarmq.storage.sha import sha256_hex

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from pathlib import Path

STATE_ENV = "SWARMQ_STATE"


def pure(text: str) -> str:
    """``str(PurePosixPath(text))``: repeated slashes and ``.`` components dropped, so is a
    trailing slash, two leading slashes kept (POSIX leaves them to the system), ``..`` kept."""
    root = "//" if text[:2] == "//" and text[2:3] != "/" else "/" if text[:1] == "/" else ""
    return root + "/".join(p for p in text.split("/") if p and p != ".") or "."


def expanded(text: str) -> str:
    """``str(Path(text).expanduser())``, raising ``RuntimeError`` as it does when a leading
    ``~`` names no home directory."""
    text = pure(text)
    if text[:1] != "~":
        return text
    head, _, rest = text.partition("/")  # pathlib expands the first component, once spelled
    home = os.path.expanduser(head)
    if home[:1] == "~":
        raise RuntimeError("Could not determine home directory.")
    return child(pure(home), rest) if rest else pure(home)


def child(base: str, name: str) -> str:
    """``str(Path(base) / name)`` for a ``base`` spelled as :func:`pure` spells it and a plain
    ``name``."""
    return name if base == "." else base + name if base.endswith("/") else f"{base}/{name}"


def state_root_path() -> str:
    """:func:`state_root` as a string."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return expanded(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = expanded(xdg) if xdg else child(child(expanded("~"), ".local"), "state")
    return child(base, "swarmq")


def state_root() -> Path:
    """Where swarmq keeps per-user state for hooks (spools, the hook server's socket, logs)."""
    from pathlib import Path

    return Path(state_root_path())


def config_key(config: Path | str) -> str:
    """A short, stable name for a roster file (its resolved path's digest)."""
    resolved = os.path.realpath(expanded(os.fspath(config)))  # Path.resolve() is realpath
    return sha256_hex(resolved.encode("utf-8"))[:16]


def swarm_state_path(config: Path | str) -> str:
    """:func:`swarm_state_dir` as a string (the asking process imports no ``pathlib``)."""
    return child(child(state_root_path(), "hooks"), config_key(config))


def swarm_state_dir(config: Path | str) -> Path:
    """The state directory of the swarm whose roster is ``config``."""
    from pathlib import Path

    return Path(swarm_state_path(config))
