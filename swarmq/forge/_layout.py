"""Where a project keeps its files, learned from a file looked for in the wrong place.

An agent that reads ``X:\\proj\\Odoo_Docs\\document_library\\models\\sync.py`` and is told the
file does not exist, then reads ``X:\\proj\\Custom_Addons\\document_library\\models\\sync.py``,
has learned where the modules live; the next session makes the same wrong guess unless it is
told. A missing file followed by another file is usually just the next look (forge drops it),
so the fact is kept only when the two paths name **the same file**: the failed path, whole, is
the tail of the found one (``architecture.md`` → ``docs/architecture.md``), the two share at
least their last two components under different roots (a module's folder and its file), or the
file was found a folder or two deeper than it was looked for (``readiness/step-01.md`` →
``readiness/steps/step-01.md``; not a name every folder has, like ``README.md``). Then
the differing roots are the lesson: "``document_library/models/sync.py`` lives under
``X:\\proj\\Custom_Addons``, not ``X:\\proj\\Odoo_Docs``".
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from itertools import pairwise

from swarmq.storage.boundedjson import loads_bounded

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
    """The root looked in first (``""``: the working directory); from the folder before the
    two roots part when they share a longer start (a lesson is short, and the long shared
    start of two absolute paths would be what it keeps of them)."""
    right: str
    """The root the file is under, from the same folder."""

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


def base_name(path: str) -> str:
    """The last component of a path as a call writes it (quotes and separators ignored)."""
    parts = _parts(path)
    return parts[-1] if parts else ""


def _mistyped(wrong: list[str], right: list[str]) -> bool:
    """Whether the wrong root is the right one mistyped (``.specify.specify`` for ``.specify``,
    ``scr`` for ``src``): one component against one, either the other one repeated or two edits
    apart. A slip of the keyboard says nothing about where the project keeps things. Not a slip:
    a name inside the other that is not its repetition (``architecture`` for
    ``create-architecture``: another folder's name), and a difference only in the leading or
    trailing ``_``, ``.`` or ``-`` (``bmad`` for ``_bmad``: a tool's naming convention the
    next session guesses the same wrong way)."""
    while wrong and right and wrong[0].lower() == right[0].lower():
        wrong, right = wrong[1:], right[1:]
    if len(wrong) != 1 or len(right) != 1:
        return False
    a, b = wrong[0].lower(), right[0].lower()
    short, long = sorted((a, b), key=len)
    if short and long.replace(short, "") == "":
        return True
    if a.strip("_.-") == b.strip("_.-"):
        return False
    return _edits(a, b) <= 2


_PER_FOLDER = frozenset(
    [
        "readme",
        "index",
        "__init__",
        "package",
        "cargo",
        "mod",
        "pyproject",
        "tsconfig",
        "claude",
        "agents",
        "makefile",
        "dockerfile",
        "setup",
        "main",
        "lib",
        "conftest",
        "changelog",
        "license",
        "settings",
        "config",
        "vite.config",
        "go",
    ]
)
"""Names many folders each have a file of (``README.md``, ``index.ts``, ``package.json``): one
a level deeper is another folder's own."""


def per_folder_name(name: str) -> bool:
    """Whether many folders each have a file of this name (``README.md``, ``index.ts``,
    ``package.json``): found elsewhere it is another folder's own, not the one looked for."""
    return name.lower().rsplit(".", 1)[0] in _PER_FOLDER


def _deeper(wrong: list[str], right: list[str], name: str) -> bool:
    """Whether the file was found a folder or two deeper than it was looked for
    (``readiness/step-01.md`` found as ``readiness/steps/step-01.md``): the same file a level
    off, not another file of the same name elsewhere, unless it is a name every folder has."""
    extra = len(right) - len(wrong)
    return (
        len(wrong) >= 1
        and 1 <= extra <= 2
        and [p.lower() for p in right[: len(wrong)]] == [p.lower() for p in wrong]
        and name.lower().rsplit(".", 1)[0] not in _PER_FOLDER
    )


def _per_folder_tail(tail: list[str]) -> bool:
    """Whether the shared tail names a file every folder or project has its own of
    (``package.json``, ``.vscode/settings.json``): found under another root it is that root's
    own file, not the one looked for (``cat package.json`` in the repository's root, then
    ``cat frontend/package.json``: the next look, not where the project keeps its manifest).
    Only the file name and dot-folders count (``.vscode``, ``.claude``): a named folder in the
    tail (``memory/MEMORY.md``, ``models/sync.py``) says which file it is."""
    *folders, name = tail
    return name.lower().rsplit(".", 1)[0] in _PER_FOLDER and all(f.startswith(".") for f in folders)


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
    wrong_root, right_root = lost[: len(lost) - shared], got[: len(got) - shared]
    if shared < len(lost) and shared < 2 and not _deeper(wrong_root, right_root, got[-1]):
        return None  # only a file name in common under two roots: maybe two files
    if _mistyped(wrong_root, right_root):
        return None
    if _per_folder_tail(got[len(got) - shared :]):
        return None  # another folder's own file of that name, not this one moved
    separator = "\\" if "\\" in found else "/"
    wrong = separator.join(wrong_root)
    right = separator.join(right_root)
    if found.startswith("/") and right:
        right = "/" + right
    if wrong and _HOME.match(right):
        return None  # the user's file of that name, not where the project keeps its own
    if missing.startswith("/") and wrong:
        wrong = "/" + wrong
    tail = separator.join(got[len(got) - shared :])
    common = 0
    while (
        common < min(len(wrong_root), len(right_root)) and wrong_root[common] == right_root[common]
    ):
        common += 1
    if common > 2:  # the roots told apart where they part, with one folder for context
        wrong = separator.join(wrong_root[common - 1 :])
        right = separator.join(right_root[common - 1 :])
    return Relocation(tail, wrong, right)


_NAME_OPTIONS = frozenset({"-g", "--glob", "-name", "-iname", "--iglob"})
"""Options whose value is the file name a search looks for (``rg --files -g x.md``,
``find . -name x.md``)."""
_SEARCHERS = frozenset({"rg", "find", "fd", "fdfind"})
_FRAMING = re.compile(
    r"^(?:exit code:? -?\d+|wall time:.*|output:|process exited with code -?\d+|"
    r"no files found|\(no output\)|chunk id:.*|original token count:.*)$",
    re.IGNORECASE,
)


def searched_names(tool: str, call: str) -> list[str]:
    """The file names a call searches for by name, lower-cased: a ``Glob`` pattern's last part,
    ``rg --files -g NAME``, ``find … -name NAME``, ``fd NAME`` (``**/`` and ``*/`` dropped);
    only names with an extension, as :func:`file_paths` reads them."""
    if tool == "Glob":
        words = [call.split()[0]] if call.split() else []
    else:
        try:
            words = shlex.split(call, posix=True)
        except ValueError:
            words = call.split()
        if not any(w.rsplit("/", 1)[-1] in _SEARCHERS for w in words):
            return []
        words = [b for a, b in pairwise(words) if a in _NAME_OPTIONS or a in ("fd", "fdfind")]
    names = []
    for word in words:
        name = _SEPARATORS.split(word.strip("'\""))[-1].lstrip("*")
        if _FILE_NAME.match(name):
            names.append(name.lower())
    return names


def nothing_found(output: str) -> bool:
    """Whether a search's output, its framing removed, is empty (Codex's older rollouts wrap it
    in ``{"output": …, "metadata": …}``)."""
    if output[:1] == "{":
        try:
            parsed = loads_bounded(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            output = parsed["output"]
    return all(_FRAMING.match(line.strip()) for line in output.splitlines() if line.strip())


__all__ = [
    "Relocation",
    "base_name",
    "file_paths",
    "nothing_found",
    "per_folder_name",
    "relocation",
    "says_missing",
    "searched_names",
]
