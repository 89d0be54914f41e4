"""A session's failed probes of missing paths, and how it resolved them.

Fed by the sequence miner with the tool traffic it already reads (no second pass over the
transcript). A probe whose error says a path is missing
(:func:`swarmq.knowledge.missing.missing_in`) waits for the next few calls; it is resolved
when one of them

- **finds it elsewhere**: a call that worked names, or prints, a path holding the missing
  one's last component (``src`` → ``apps/web/src/lib/api.js`` in a search's output: the
  folder is ``apps/web/src``), or for a file a path of the same name under another folder or
  of the same stem with another extension (``vite.config.js`` → ``apps/web/vite.config.mjs``);
- or **shows it absent**: an ``ls`` of the folder it was looked for in, which worked and does
  not list it.

A path the session then creates (written, touched, made) was not missing knowledge but
missing work: dropped. So is one that forge made a lesson of already (a file relocated, a
file a search by name did not find: :mod:`swarmq.forge._sequences`). What is left is an
observation (:class:`swarmq.flywheel.probes.ProbeObservation`), never a candidate lesson.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from swarmq.forge._calls import CD_PREFIX, clip
from swarmq.forge._layout import per_folder_name
from swarmq.knowledge.missing import missing_in, parts, path_key, same_path
from swarmq.knowledge.signature import call_program

WINDOW = 8
"""How many later calls may still resolve a missing path."""
OUTPUT_CHARS = 4000
"""How much of a working call's output is read for paths."""
CALL_CHARS = 120
"""How much of the failed probe an observation quotes."""

_EDITORS = frozenset({"apply_patch", "Edit", "MultiEdit", "Write", "str_replace_editor"})
_MAKERS = frozenset({"touch", "mkdir", "cp", "mv", "tee", "new-item", "ni", "git"})
"""Programs that create the path they name (``git`` for ``git mv`` / ``git worktree add``)."""
_LISTERS = frozenset({"ls", "dir", "get-childitem", "gci"})
_PATH = re.compile(
    r"(?:[A-Za-z]:)?(?:[\w.@+~-]+)?(?:[/\\][\w.@+~-]+)+|[\w@+-][\w.@+-]*\.[A-Za-z]\w{0,7}"
)
"""A path in a call or an output: with a separator, or a file name with an extension."""
_FILE = re.compile(r"^[\w@+-][\w.@+-]*\.[a-z][\w]{0,7}$")
"""A file name with an extension (lower-cased): anything else looked for may be a folder."""
_NAME_SEARCHES = frozenset({"rg", "find", "fd", "fdfind"})
_NAME_OPTIONS = re.compile(r"(?:^|\s)(?:--files|-i?name|-g|--glob)(?:\s|$)")
_HOME = re.compile(r"^(?:/Users/[^/]+|/home/[^/]+|/root)(?=/|$)")
_VENDORED = ("node_modules", ".git", "site-packages", ".venv", "dist", "build", "target")


@dataclass(slots=True)
class Probe:
    """A failed look for a missing path, waiting for what the session does next."""

    call: str
    path: str
    """As the error wrote it (what a later failure's error will write again)."""
    where: str
    """The same path from where the call ran (its ``cd`` prefix joined)."""
    line_no: int
    timestamp: str | None
    waited: int = 0


@dataclass(frozen=True, slots=True)
class Resolved:
    """A missing path and what the session learned about it."""

    call: str
    path: str
    resolution: str
    """``found`` or ``absent`` (the words of :mod:`swarmq.flywheel.probes`)."""
    found: str
    line_no: int
    timestamp: str | None


def _cd_dir(call: str) -> str:
    match = CD_PREFIX.match(call)
    if match is None:
        return ""
    return match.group(0).strip().removeprefix("cd").strip().rstrip("&;").strip().strip("'\"")


def _joined(base: str, path: str) -> str:
    if not base or path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
        return path
    return f"{base.rstrip('/')}/{path}"


def _vendored(path: str, missing: str) -> bool:
    inside = {p.lower() for p in parts(path)}
    return any(v in inside for v in _VENDORED) and not any(v in missing.lower() for v in _VENDORED)


def _place(missing: str, candidate: str, *, through: bool = False, searched: bool = False) -> str:
    """Where ``candidate`` puts the missing path (``""``: it does not).

    - A folder: the folder of the same name ``candidate`` passes through (``through``: only a
      path that goes on inside it, as a listing's lines do; a bare name in an output is often
      a package's or a module's).
    - A file: the same name under another folder, when the two paths share their last two
      components (or the file was looked for by its name alone): only a file name in common
      may be two files; or the same stem with another extension, for a file looked for by its
      name alone (``vite.config.js`` → ``apps/web/vite.config.mjs``).
    - A name many folders have a file of (``package.json``, ``index.ts``): only as the one
      place a search by that name (``searched``) found, else it is another folder's own.
    """
    wanted = path_key(missing)
    got = parts(candidate)
    if not wanted or not got or _vendored(candidate, missing) or ".." in got:
        return ""
    lost = [p.lower() for p in parts(missing)]
    lowered = [p.lower() for p in got]
    separator = "\\" if "\\" in candidate and "/" not in candidate else "/"
    lead = separator if candidate.startswith(("/", "\\")) else ""
    right = ""
    if not _FILE.match(wanted):
        if wanted in lowered:
            at = lowered.index(wanted)
            if through and at == len(got) - 1:
                return ""
            right = lead + separator.join(got[: at + 1])
    elif per_folder_name(wanted) and not searched:
        return ""
    elif lowered[-1] == wanted:
        if searched or _shared_tail(lost, candidate) >= min(2, len(lost)):
            right = lead + separator.join(got)
    elif searched or len(lost) == 1 or lowered[:-1] == lost[:-1]:  # by name, or its own folder
        stem = wanted.rsplit(".", 1)[0]
        name = lowered[-1]
        if len(stem) >= 4 and "." in name and name.rsplit(".", 1)[0] == stem:
            right = lead + separator.join(got)
    if not right or (same_path(right, missing) and len(parts(right)) <= len(parts(missing))):
        return ""
    if _HOME.sub("~", right).lower() == _HOME.sub("~", missing).rstrip("/\\").lower():
        return ""  # the same folder, written from the home directory
    return right


def _shared_tail(wanted: list[str], place: str) -> int:
    """How many of the missing path's last components ``place`` ends with."""
    got = [p.lower() for p in parts(place)]
    shared = 0
    while shared < min(len(got), len(wanted)) and got[-1 - shared] == wanted[-1 - shared]:
        shared += 1
    return shared


@dataclass(slots=True)
class ProbeWatcher:
    """Feed it every tool result (failed or not) of one transcript, in order."""

    waiting: list[Probe] = field(default_factory=list)
    resolved: list[Resolved] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    """Missing paths' keys already taken this session (one observation per path)."""

    def failed(
        self, tool: str, call: str, output: str, line_no: int, timestamp: str | None
    ) -> None:
        self._tick()
        for missing in missing_in(call, output[:1500]):
            key = missing.key
            if key in self.seen or any(c in missing.path for c in "*?["):
                continue  # seen, or a pattern
            self.seen.add(key)
            base = _cd_dir(call)
            where = missing.path if missing.program == "cd" else _joined(base, missing.path)
            self.waiting.append(
                Probe(clip(call, CALL_CHARS), missing.path, where, line_no, timestamp)
            )
        del self.waiting[:-8]

    def worked(self, tool: str, call: str, whole: str, output: str) -> None:
        if not self.waiting:
            return
        runs = call_program(whole or call)
        base = _cd_dir(whole or call)
        text = (whole or call).lower()
        still = []
        for probe in self.waiting:
            key = path_key(probe.where)
            if (tool in _EDITORS or runs in _MAKERS) and key in text:
                continue  # the session made it: missing work, not missing knowledge
            found = self._found(probe, tool, whole or call, output, base, runs)
            if found is not None:
                self.resolved.append(found)
                continue
            probe.waited += 1
            if probe.waited < WINDOW:
                still.append(probe)
        self.waiting = still

    def settle(self, path: str) -> None:
        """Forge made a lesson of this missing path: no observation of it."""
        self.waiting = [
            p for p in self.waiting if not same_path(p.path, path) and not same_path(p.where, path)
        ]
        self.resolved = [r for r in self.resolved if not same_path(r.path, path)]

    def _tick(self) -> None:
        still = []
        for probe in self.waiting:
            probe.waited += 1
            if probe.waited < WINDOW:
                still.append(probe)
        self.waiting = still

    def _found(
        self, probe: Probe, tool: str, call: str, output: str, base: str, runs: str
    ) -> Resolved | None:
        operands = [_joined(base, w) for w in _PATH.findall(CD_PREFIX.sub("", call))]
        for operand in operands:
            right = _place(probe.where, operand)
            if right:
                return Resolved(
                    probe.call, probe.path, "found", right, probe.line_no, probe.timestamp
                )
        head = output[:OUTPUT_CHARS].replace("\\n", "\n")  # a JSON-wrapped output's lines
        lister = runs in _LISTERS
        listed_dir = ""
        if lister:
            words = CD_PREFIX.sub("", call).split()[1:]
            if any(w.startswith("-") and not w.startswith("--") and "d" in w for w in words):
                lister = False  # ``ls -ld x`` lists x itself, not what is in it
            words = [w for w in words if not w.startswith("-")]
            listed_dir = _joined(base, words[0]) if len(words) == 1 else base
        named = tool == "Glob" or (
            runs in _NAME_SEARCHES and _NAME_OPTIONS.search(call) is not None
        )
        places: Counter[str] = Counter()
        only: set[str] = set()
        for token in _PATH.findall(head):
            token = _joined(listed_dir if lister else base, token)
            right = _place(probe.where, token, through=True)
            if right:
                places[right] += 1
            if named:
                only.add(_place(probe.where, token, through=True, searched=True))
        only.discard("")
        if len(only) == 1:  # the one file of that name or stem a search by name found
            (right,) = only
            return Resolved(probe.call, probe.path, "found", right, probe.line_no, probe.timestamp)
        if places:
            wanted = [p.lower() for p in parts(probe.where)]
            right = max(places, key=lambda r: (_shared_tail(wanted, r), places[r]))
            return Resolved(probe.call, probe.path, "found", right, probe.line_no, probe.timestamp)
        if lister and head.strip() and self._absent_from(probe.where, listed_dir, head):
            return Resolved(
                probe.call,
                probe.path,
                "absent",
                clip(call, CALL_CHARS),
                probe.line_no,
                probe.timestamp,
            )
        return None

    @staticmethod
    def _absent_from(missing: str, listed: str, output: str) -> bool:
        """Whether a listing of the folder ``missing`` was looked for in leaves it out."""
        folder = parts(missing)[:-1]
        if [p.lower() for p in parts(listed)] != [p.lower() for p in folder]:
            return False
        return path_key(missing) not in output.lower()


__all__ = ["WINDOW", "Probe", "ProbeWatcher", "Resolved"]
