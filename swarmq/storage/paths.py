"""Identifier validation and path containment for every canonical root.

Ids come from swarm.yaml, the orchestrator and HTTP callers; a hostile id must never let a write
land outside its root. Ids are checked against a strict ASCII pattern (which rules out ``..``,
separators, NUL, percent-encoding and Unicode look-alikes in one go), and every resolved path is
then proven to stay inside its root after symlinks are followed.
"""

from __future__ import annotations

import os
import re
import stat
import time
import unicodedata
from datetime import date
from pathlib import Path

from swarmq.errors import InvalidInput

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Worker ids, mission ids and other path components supplied from outside."""


class UnsafePathError(InvalidInput):
    """An id or path that would escape its canonical root."""


def check_id(value: object, kind: str = "id") -> str:
    """Return ``value`` if it is a safe id, else raise :class:`UnsafePathError` saying why."""
    if not isinstance(value, str):
        raise UnsafePathError(f"{kind} must be a string, got {type(value).__name__}")
    if ID_PATTERN.fullmatch(value) is None:
        shown = value if len(value) <= 80 else value[:77] + "..."
        hint = ""
        if value != unicodedata.normalize("NFKC", value) or not value.isascii():
            hint = " (it contains non-ASCII characters, e.g. Unicode look-alikes of '.' or '/')"
        elif "%" in value:
            hint = " (percent-encoded characters are not decoded here)"
        raise UnsafePathError(
            f"{kind} {shown!r} is not allowed: use 1-64 ASCII letters, digits, '_' or '-'{hint}"
        )
    return value


DATE_PATTERN = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def check_date(value: object, kind: str = "date") -> str:
    """Return ``value`` if it is a real ``YYYY-MM-DD`` calendar date (episode file names)."""
    if not isinstance(value, str) or DATE_PATTERN.fullmatch(value) is None:
        raise UnsafePathError(f"{kind} {value!r} is not allowed: expected YYYY-MM-DD")
    try:
        date.fromisoformat(value)
    except ValueError as exc:
        raise UnsafePathError(f"{kind} {value!r} is not a calendar date: {exc}") from exc
    return value


def resolve_inside(root: Path | str, *parts: str) -> Path:
    """Join ``parts`` under ``root`` and prove the real path stays inside the real root.

    Symlinks are resolved (also for a path that does not exist yet, through its existing
    ancestors), so a link pointing out of the root is refused like ``..`` is.
    """
    for part in parts:
        if not part or "\x00" in part or os.path.isabs(part):
            raise UnsafePathError(f"path component {part!r} is not allowed under {root}")
    root_real = _real_root(root)
    candidate = _real_below(root_real, parts)
    if candidate != root_real and not candidate.startswith(root_real.rstrip(os.sep) + os.sep):
        raise UnsafePathError(f"{'/'.join(parts)!r} resolves outside {root_real}")
    return Path(candidate)


ROOT_TTL_SECONDS = 1.0
"""How long a root's real path is reused. Roots come from swarm.yaml (trusted); one that is
re-pointed while a process runs is followed within this long. The ids below a root are looked
at on every call."""
_ROOTS: dict[str, tuple[str, float]] = {}


def _real_root(root: Path | str) -> str:
    """``realpath(root)``, remembered for :data:`ROOT_TTL_SECONDS` (a mission's paths are
    built a few dozen times before its agent starts, every one under the same root)."""
    key = os.fspath(root)
    now = time.monotonic()
    cached = _ROOTS.get(key)
    if cached is not None and cached[1] > now:
        return cached[0]
    real = os.path.realpath(key)
    if len(_ROOTS) > 256:
        _ROOTS.clear()
    _ROOTS[key] = (real, now + ROOT_TTL_SECONDS)
    return real


def _real_below(root_real: str, parts: tuple[str, ...]) -> str:
    """``realpath(root_real/parts)`` for a root already real: only the parts below it are
    looked at (one ``lstat`` each; a mission's paths are built many times before its agent
    starts), the full ``realpath`` once a part is a symlink, ``.``, ``..`` or holds a separator."""
    path = root_real
    for part in parts:
        if part in (os.curdir, os.pardir) or os.sep in part or (os.altsep and os.altsep in part):
            return os.path.realpath(os.path.join(root_real, *parts))
        path = os.path.join(path, part)
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:  # absent: like realpath, keep it (and what follows) as written
            link = False
        if link:
            return os.path.realpath(os.path.join(root_real, *parts))
    return path


def contain(root: Path | str, path: Path | str) -> Path:
    """Prove that an already built ``path`` (a layout's file, a directory listing's entry) still
    resolves inside ``root`` once symlinks are followed; the real path, or
    :class:`UnsafePathError`. Every file the API serves goes through here or
    :func:`resolve_inside`, so a symlink planted under a root cannot serve ``/etc/passwd``."""
    root_real = os.path.realpath(root)
    relative = os.path.relpath(os.path.realpath(path), root_real)
    if relative == os.curdir:
        return Path(root_real)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise UnsafePathError(f"{path} resolves outside {root_real}")
    return resolve_inside(root_real, *Path(relative).parts)


def read_text_inside(root: Path | str, path: Path | str) -> str | None:
    """The text of ``path`` proven inside ``root`` (``None`` when it is not a regular file);
    opened without following a symlink swapped in after the check."""
    real = contain(root, path)
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:  # ELOOP: a symlink appeared after the check
        raise UnsafePathError(f"{path}: refused ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read().decode("utf-8", errors="replace")
