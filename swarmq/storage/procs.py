"""Is a process alive? Asked by the launcher (pid files) and by missions (stale claims)."""

from __future__ import annotations

import os


def pid_alive(pid: object) -> bool:
    """True when ``pid`` names a running process on this host (a zombie counts as gone)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, but alive
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) is all we know
