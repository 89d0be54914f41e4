"""The path a failed probe looked for and did not find: one normalised key per missing path.

A probe (a file read, an ``ls``, a ``cd``, a search given a path) of a path that is not there
fails with the program's own wording: ``sed: can't read vite.config.js: No such file or
directory``, ``cat: apps/web/vite.config.js: No such file or directory``, ``rg: src: IO error
for operation on src: No such file or directory (os error 2)``, ``ls: cannot access 'x'``,
Claude Code's ``File does not exist.``, PowerShell's ``Cannot find path 'x' because it does
not exist``. The failure signature (:mod:`swarmq.knowledge.signature`) keeps the program, so
``sed`` and ``cat`` of the same missing file are two signatures; what recurs across sessions is
the path, whichever program looked. So the key here is the path's last component (lower-cased),
and two missing paths are the same when their keys agree and one is the other's tail
(``vite.config.js`` and ``apps/web/vite.config.js``; not ``a/src`` and ``b/src``).

Only probes count: a program that reads or lists what it is given. A build or a script that
fails on a missing file is another failure (its cause is not where the agent looked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swarmq.knowledge.signature import call_program, split_failure

PROBES = frozenset(
    {
        "cat",
        "head",
        "tail",
        "sed",
        "less",
        "more",
        "bat",
        "nl",
        "wc",
        "ls",
        "stat",
        "file",
        "tree",
        "cd",
        "pushd",
        "rg",
        "grep",
        "find",
        "fd",
        "get-content",
        "gc",
        "get-childitem",
        "dir",
        "type",
    }
)
"""Programs whose failure on a missing path is a look that found nothing there."""
READING_TOOLS = frozenset({"read", "notebookread", "view", "ls", "glob", "grep"})
"""An agent's own tools whose call is a path (``Read /x/a.py``)."""

_MISSING = (
    # sed: can't read x: No such file or directory / tail: cannot open 'x' for reading: …
    re.compile(
        r"(?:can't read|cannot open|cannot access|cannot stat) ['‘\"]?([^'’\":\n]+?)['’\"]?"
        r"(?: for reading)?: no such file or directory",
        re.IGNORECASE,
    ),
    # rg: src: IO error for operation on src: No such file or directory
    re.compile(r"io error for operation on ([^:\n]+): no such file or directory", re.IGNORECASE),
    # cat: x: No such file or directory / bash: line 1: cd: x: … / find: 'x': …
    re.compile(r"(?:^|: )['‘\"]?([^'’\":\n]+?)['’\"]?: no such file or directory", re.IGNORECASE),
    # zsh: cd: no such file or directory: x
    re.compile(r"no such file or directory: ['‘\"]?([^'’\"\n]+?)['’\"]?\s*$", re.IGNORECASE),
    # PowerShell: Cannot find path 'C:\x' because it does not exist.
    re.compile(r"cannot find path ['‘\"]([^'’\"\n]+)['’\"] because it does not exist", re.I),
)
_CD = re.compile(
    r"\bcd: (?:no such file or directory: ['\"]?([^'\"\n]+?)['\"]?\s*$|"
    r"['\"]?([^'\":\n]+?)['\"]?: no such file or directory)",
    re.IGNORECASE,
)
"""A ``cd`` that failed, wherever it stands in a chain (``cd x && npm test``)."""
_TOOL_MISSING = re.compile(
    r"^(?:<tool_use_error>)?\s*(?:file|path|directory) does not exist\b", re.IGNORECASE
)
"""Claude Code's Read / LS refusing a path that is not there (the path is the call)."""
_SEPARATORS = re.compile(r"[/\\]+")
_FILE_NAME = re.compile(r"^[\w@+-][\w.@+-]*\.[A-Za-z]\w{0,7}$")
MAX_KEY = 80
"""A longer last component is a generated name, not a path an agent guesses again."""


@dataclass(frozen=True, slots=True)
class MissingPath:
    """A path a probe looked for and did not find."""

    path: str
    """As the error (or the tool's call) wrote it, quotes dropped."""
    program: str
    """The probe that looked (``cat``, ``rg``, ``read``)."""

    @property
    def key(self) -> str:
        return path_key(self.path)


def parts(path: str) -> list[str]:
    """A path's components (``.`` and empty ones dropped)."""
    return [p for p in _SEPARATORS.split(path.strip().strip("'\"`")) if p and p != "."]


def names_file(path: str) -> bool:
    """Whether the path's last component is a file name with an extension (``a.py``; not
    ``.ssh``, ``src``): what a statement calls "the file"."""
    found = parts(path)
    return bool(found) and _FILE_NAME.match(found[-1]) is not None


def path_key(path: str) -> str:
    """The last component, lower-cased (``""`` for a path with none)."""
    found = parts(path)
    return found[-1].lower() if found else ""


def same_path(a: str, b: str) -> bool:
    """Whether two missing paths are the same one looked for: the same last component, and
    one is the other's tail (``vite.config.js`` / ``apps/web/vite.config.js``); two folders'
    own files of one name (``a/src``, ``b/src``) are not."""
    left, right = [p.lower() for p in parts(a)], [p.lower() for p in parts(b)]
    if not left or not right or left[-1] != right[-1]:
        return False
    short, long = sorted((left, right), key=len)
    return long[len(long) - len(short) :] == short


def missing_paths(text: str) -> tuple[MissingPath, ...]:
    """The paths a failed probe in ``text`` (a hook's ``$ <call>`` then its error, or a call
    and error joined the same way) says are missing; ``()`` when the call is no probe or the
    error names no missing path."""
    call, error = split_failure(text)
    return missing_in(call, error)


def missing_in(call: str, error: str) -> tuple[MissingPath, ...]:
    """:func:`missing_paths` of a call and its error given apart."""
    call = call.strip()
    if not call or not error:
        return ()
    head = error[:1500].replace("\\n", "\n")
    words = call.split()
    tool = words[0].lower() if words else ""
    if _TOOL_MISSING.search(head.strip()):
        path = words[-1] if tool in READING_TOOLS and len(words) == 2 else call
        if " " in path or not parts(path):
            return ()
        return (MissingPath(path.strip("'\""), tool if tool in READING_TOOLS else "read"),)
    moved = _CD.search(head)
    if moved is not None:
        path = (moved.group(1) or moved.group(2) or "").strip()
        key = path_key(path)
        return (MissingPath(path, "cd"),) if key and key in call.lower() else ()
    runs = call_program(call)
    if runs not in PROBES:
        return ()
    out: list[MissingPath] = []
    for line in head.splitlines():
        line = line.strip()
        for pattern in _MISSING:
            match = pattern.search(line)
            if match is None:
                continue
            path = match.group(1).strip().strip("'\"‘’")
            key = path_key(path)
            if key and len(key) <= MAX_KEY and key in call.lower() and key != runs:
                out.append(MissingPath(path, runs))
            break
    return tuple({m.key: m for m in out}.values())


__all__ = [
    "PROBES",
    "READING_TOOLS",
    "MissingPath",
    "missing_in",
    "missing_paths",
    "names_file",
    "parts",
    "path_key",
    "same_path",
]
