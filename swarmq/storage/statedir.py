"""Where swarmq keeps a swarm's per-user state on this host: the hooks' spool, the resident
server's socket, its logs.

Under ``$SWARMQ_STATE`` (default ``$XDG_STATE_HOME/swarmq``, else ``~/.local/state/swarmq``), in
a directory named after the resolved path of the swarm's ``swarm.yaml``, so a hook or a fresh
``swarmq`` process (which know the roster's path, not its content) and the processes that load
the roster agree on it without reading anything. Apart from the spool because a fresh process
asking the resident server needs this and nothing else of storage: standard library only, and
no ``typing`` (a fresh process pays for every import before its first byte).
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmq.storage.sha import sha256_hex

STATE_ENV = "SWARMQ_STATE"


def state_root() -> Path:
    """Where swarmq keeps per-user state for hooks (spools, the hook server's socket, logs)."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "swarmq"


def config_key(config: Path | str) -> str:
    """A short, stable name for a roster file (its resolved path's digest)."""
    resolved = str(Path(config).expanduser().resolve())
    return sha256_hex(resolved.encode("utf-8"))[:16]


def swarm_state_dir(config: Path | str) -> Path:
    """The state directory of the swarm whose roster is ``config``."""
    return state_root() / "hooks" / config_key(config)
