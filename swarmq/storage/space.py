"""A full disk as an error of its own: "no space left on <path>", with its own CLI exit status.

The writers of :mod:`swarmq.storage.atomic` and the lock counters of
:mod:`swarmq.storage.locking` turn ``ENOSPC``/``EDQUOT`` into :class:`DiskFull` after undoing
what they wrote (a failed append cut back, a temp file removed), so a full disk leaves every
file as it was and the user reads one line naming the file instead of a traceback.
"""

from __future__ import annotations

import errno
from pathlib import Path

from swarmq.errors import Unavailable

NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})
"""``errno`` values of a write refused for space: the disk (or the user's quota) is full."""


class DiskFull(Unavailable, OSError):
    """No space left writing ``path``: the file is as it was before the write (an append cut
    back, a rewrite not made). Still an ``OSError`` (errno ENOSPC or EDQUOT), so a best-effort
    writer of a derived file that catches ``OSError`` keeps doing so; free space and retry."""

    def __init__(self, path: Path | str, cause: OSError) -> None:
        super().__init__(cause.errno, f"no space left on {path}")
        self.path = Path(path)

    def __str__(self) -> str:
        return str(self.args[1])


def no_space(path: Path | str, exc: BaseException) -> DiskFull | None:
    """``exc`` as a :class:`DiskFull` when it says the disk is full (``None`` otherwise)."""
    if isinstance(exc, DiskFull):
        return exc
    if isinstance(exc, OSError) and exc.errno in NO_SPACE:
        return DiskFull(path, exc)
    return None
