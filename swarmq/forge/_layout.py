"""Where a project keeps its files, learned from a file looked for in the wrong place.

An agent that reads ``X:\\proj\\Odoo_Docs\\document_library\\models\\sync.py`` and is told the
file does not exist, then reads ``X:\\proj\\Custom_Addons\\document_library\\models\\sync.py``,
has learned where the modules live; the next session makes the same wrong guess unless it is
told. A missing file followed by another file is usually just the next look (forge drops it),
so the fact is kept only when the two paths name **the same file**: the failed path, whole, is
the tail of the found one (``architecture.md`` → ``docs/architecture.md``), or the two share at
least their last two components under different roots (a module's folder and its file). Then
the differing roots are the lesson: "``document_library/models/sync.py`` lives under
``X:\\proj\\Custom_Addons``, not ``X:\\proj\\Odoo_Docs``".
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_READING_TOOLS = frozenset({"Read", "NotebookRead", "Edit", "MultiEdit", "Write", "view"})
"""Tools whose call is a file's path."""
_READERS = frozenset(
    {"cat", "head", "tail", "sed", "less", "more", "bat", "nl", "wc", "ls", "stat", "code", "vim"}
)
"""Shell programs that open the files they name."""
_SEPARATORS = re.compile(r"[/\\]+")
_FILE_NAME = re.compile(r"^[\w@+-][\w.@+-]*\.[A-Za-z][\w]{0,7}$")
"""A file name with an extension (``graph_sync.py``, ``architecture.md``): directories and bare
words are too often different things of the same name."""
_MISSING = re.compile(
    r"no such file or directory|does(?: not|n't) exist|cannot access|can't open|cannot open|"
    r"cannot find (?:the )?(?:path|file)|could not find (?:the )?file|\bENOENT\b|cannot stat",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Relocation:
    """The same file found under another root than the one first looked in."""

    tail: str
    """The shared part of the two paths, as the found path spells it (``docs/x.md``'s ``x.md``)."""
    wrong: str
    """The root looked in first (``""``: the working directory)."""
    right: str
    """The root the file is under."""

    def fact(self) -> str:
        wrong = f"`{self.wrong}`" if self.wrong else "the working directory"
        return f"`{self.tail}` lives in `{self.right}`, not in {wrong}"


def says_missing(error: str) -> bool:
    """Whether an error says that a named file is not there."""
    return _MISSING.search(error) is not None


def file_paths(tool: str, call: str) -> list[str]:
    """The files a call opens, as written: a reading tool's path, or the path-like operands of
    a shell reader (``sed -n 1,80p docs/a.md`` → ``docs/a.md``)."""
    if tool in _READING_TOOLS:
        path = call.strip()
        return [path] if path and " " not in path else []
    try:
        words = shlex.split(call.replace("\\", "\\\\"), posix=True)
    except ValueError:
        words = call.split()
    for at, word in enumerate(words):  # the first reader of a chain (``cd x && cat y``)
        if word.rsplit("/", 1)[-1] in _READERS:
            return [w for w in words[at + 1 :] if _is_path(w)][:4]
        if word in ("&&", ";", "||") or word.startswith("cd"):
            continue
    return []


def _is_path(word: str) -> bool:
    if not word or word[0] in "-|&;<>" or "=" in word or "*" in word:
        return False
    return _FILE_NAME.match(_SEPARATORS.split(word.rstrip("/\\"))[-1]) is not None


def _parts(path: str) -> list[str]:
    return [p for p in _SEPARATORS.split(path.strip().strip("'\"")) if p and p != "."]


def _mistyped(wrong: list[str], right: list[str]) -> bool:
    """Whether the wrong root is the right one mistyped (``.specify.specify`` for ``.specify``,
    ``scr`` for ``src``): one component against one, either inside the other or two edits
    apart. A slip of the keyboard says nothing about where the project keeps things."""
    while wrong and right and wrong[0].lower() == right[0].lower():
        wrong, right = wrong[1:], right[1:]
    if len(wrong) != 1 or len(right) != 1:
        return False
    a, b = wrong[0].lower(), right[0].lower()
    return a in b or b in a or _edits(a, b) <= 2


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (short path components only)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


_HOME = re.compile(
    r"^(?:/Users/[^/]+|/home/[^/]+|/root|~|[A-Za-z]:\\Users\\[^\\]+)$", re.IGNORECASE
)
"""A user's home directory: what is found there (``~/.claude/settings.json``) is the user's
own file, the level above the project's of a configuration looked up level by level."""


def relocation(missing: str, found: str) -> Relocation | None:
    """How ``found`` relocates the ``missing`` path, when they name the same file (see the
    module's docstring); ``None`` when they do not, or name it at the same place."""
    lost, got = _parts(missing), _parts(found)
    if not lost or not got or not _FILE_NAME.match(got[-1]):
        return None
    shared = 0
    while (
        shared < min(len(lost), len(got)) and lost[-1 - shared].lower() == got[-1 - shared].lower()
    ):
        shared += 1
    if shared == 0 or shared == len(got):
        return None  # another file, or the found path is no longer than the shared tail
    if shared < len(lost) and shared < 2:
        return None  # only a file name in common under two roots: maybe two files
    wrong_root, right_root = lost[: len(lost) - shared], got[: len(got) - shared]
    if _mistyped(wrong_root, right_root):
        return None
    separator = "\\" if "\\" in found else "/"
    wrong = separator.join(wrong_root)
    right = separator.join(right_root)
    if found.startswith("/") and right:
        right = "/" + right
    if wrong and _HOME.match(right):
        return None  # the user's file of that name, not where the project keeps its own
    if missing.startswith("/") and wrong:
        wrong = "/" + wrong
    return Relocation(separator.join(got[len(got) - shared :]), wrong, right)


__all__ = ["Relocation", "file_paths", "relocation", "says_missing"]
