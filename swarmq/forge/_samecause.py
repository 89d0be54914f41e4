"""One cause, one candidate: the failures of one session that share a cause are one lesson.

The miner (:mod:`._sequences`) keeps each failure whose error it has not seen in the session, so
one cause met by several calls becomes a lesson per call: a sandbox without network stops ``pip
install pyttsx3`` and then the script that imports it ("No module named 'pyttsx3'"); a daemon the
sandbox will not let run fails under its client (``…/speech-dispatcher/speechd.sock: Operation
not permitted``) and then when started by hand. Each copy is a false lesson beside the one that
states the cause, and the next session is told the same thing three times. Failures are joined
when the transcript itself ties them, the same for every project:

- **one thing missing**: each names the same missing program, module or package (``jq: command
  not found`` and an installer's "jq is required but not installed"; an install of ``pyttsx3``
  that failed and "No module named 'pyttsx3'");
- **one program refused**: neither was got past, and the program one of them ran is what the
  other's error names (``spd-say`` failing on ``speech-dispatcher``'s socket, then
  ``speech-dispatcher`` itself failing);

A call the harness killed (a timeout) and the same call run again that is refused by a lock
the killed one left (``git add .`` timed out, then "Unable to create '…/.git/index.lock': File
exists") are one lesson too, though the second failure alone says too little to be kept: the
lock is what the timeout costs, and how to clear it is the cure. Likewise a killed call nothing
cured is told with the session's check of the state it was to change (``gh auth login --web``
killed, and ``gh auth status`` after the command had run still "not logged into any GitHub
hosts"): the kill leaves its effect unknown, the check is what the session learnt of it.

The joined lesson is a chain: the lesson of the call that states the cause (a failed install,
else one that was got past, else the first), then each other call and its error, "on the same
cause". The agent's own summary of the failures, when it is the sentence a failure already
quotes as its reason, is dropped as one more copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_MISSING_NAMED = (
    re.compile(r"no module named ['\"]?([\w.-]+)", re.IGNORECASE),
    re.compile(r"cannot find (?:module|package) ['\"]?([@\w./-]+)", re.IGNORECASE),
    re.compile(r"command not found: ([\w.+-]+)", re.IGNORECASE),
    re.compile(r"(?:^|[\s:'\"`])([\w.+-]+): command not found", re.IGNORECASE),
    re.compile(r"\b(?:ba|z|da)?sh(?::\s*(?:line )?\d+)?: ([\w.+-]+): not found", re.IGNORECASE),
    re.compile(r"([\w.+-]+) (?:is|was) (?:required|needed) but (?:it )?(?:is |was )?not", re.I),
    re.compile(r"([\w.+-]+) (?:is|was) not installed", re.IGNORECASE),
    re.compile(r"no matching distribution found for ([\w.-]+)", re.IGNORECASE),
)
"""An error naming what is missing: a module, a package, a program. A bare ``X: not found`` is
read only from a shell (``sh: 1: jq: not found``): from a program it names what it looked up
(``release: not found``), which is no missing thing that two failures could share."""
_INSTALL = re.compile(
    r"(?:^|\s)(?:pip3?|python3? -m pip|uv pip|npm|pnpm|yarn|bun|apt(?:-get)?|brew|gem|cargo|"
    r"dnf|yum|apk|pacman|conda)\s+(?:install|add|i|-S)\s+(?P<what>[^|;&]+)"
)
"""An install call and what it installs."""
_OPTION = re.compile(r"^-")
_WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "timeout", "command", "exec", "xargs"})
_SHELLS = re.compile(r"^(?:/\S*/)?(?:ba|z|da)?sh\s+-l?c\s+")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=\S*$")
GENERIC_PROGRAMS = frozenset(
    {
        "bash", "zsh", "sh", "python", "python3", "node", "npm", "npx", "pip", "pip3", "git",
        "cd", "ls", "cat", "echo", "make", "curl", "wget", "go", "java", "ruby", "deno", "bun",
        "docker", "uv", "cargo", "test", "find", "grep", "rg", "sed", "awk", "cp", "mv", "rm",
        "mkdir", "chmod", "open", "start", "run", "code", "which",
    }
)  # fmt: skip
"""Programs too common to tie two failures by being named in an error: ``node``, ``git`` or
``python`` appear in most errors of their ecosystems whatever the cause."""
MIN_NAMED = 4
"""A program name shorter than this says too little where an error names it (``gh``, ``jq``
are tied by the missing-thing rule, which reads a name in its place)."""
_CHAIN_MAX = 3
"""How many failures one chain names at most (the cause's and two more): a longer list is a
log, and the lesson is cut to its length anyway."""
REASON_PREFIX = 60
"""How many characters of the agent's sentence identify it as a failure's quoted reason."""


@dataclass(frozen=True, slots=True)
class Failure:
    """What :func:`groups` needs to know of one mined failure."""

    call: str
    error: str
    fixed: bool
    reason: str = ""


def _runs(call: str) -> str:
    """The program a call runs, seen through a shell's ``-c``, environment assignments and
    wrappers (``/bin/sh -c XDG_RUNTIME_DIR=/tmp/x speech-dispatcher -d`` runs
    ``speech-dispatcher``); lower-cased, without its directory."""
    text = _SHELLS.sub("", call.strip()).strip("'\"")
    for word in text.split():
        word = word.strip("'\"")
        if _ASSIGNMENT.match(word) or word in _WRAPPERS or _OPTION.match(word):
            continue
        return word.rsplit("/", 1)[-1].lower()
    return ""


def _installs(call: str) -> set[str]:
    """The packages an install call asks for (``pip install pyttsx3`` → ``pyttsx3``)."""
    found = _INSTALL.search(call)
    if found is None:
        return set()
    names = set()
    for word in found.group("what").split():
        word = word.strip("'\"")
        if not word or _OPTION.match(word) or "/" in word or "=" in word[:1]:
            continue
        names.add(re.split(r"[<>=@\[~^]", word, maxsplit=1)[0].lower())
    return {n for n in names if n}


def _missing(failure: Failure) -> set[str]:
    """What the failure says is missing: named in its error, or what its failed install asked
    for."""
    names = {
        m.group(1).lower().strip(".") for p in _MISSING_NAMED for m in p.finditer(failure.error)
    }
    names = {n.split(".")[0] if "." in n and not n.startswith(".") else n for n in names}
    if not failure.fixed:  # an install that failed on the package itself (its download, its
        names |= {n for n in _installs(failure.call) if _names(failure.error, n)}  # name)
    return {
        n
        for n in names
        if len(n) >= 2 and not n.isdigit() and n not in ("the", "it", "this", "that", "file")
    }


def _names(error: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", error, re.IGNORECASE) is not None


def same_cause(a: Failure, b: Failure) -> bool:
    """Whether the transcript ties the two failures to one cause (see the module docstring)."""
    if _missing(a) & _missing(b):
        return True
    if a.fixed or b.fixed:
        return False
    for one, other in ((a, b), (b, a)):
        runs = _runs(other.call)
        if (
            len(runs) >= MIN_NAMED
            and runs not in GENERIC_PROGRAMS
            and runs != _runs(one.call)
            and _names(one.error, runs)
        ):
            return True
    return False  # one error printed by two commands is not enough: two limits of the harness
    # (a timeout) meet unrelated calls, and each call's lesson is its own


_KILLED = re.compile(r"timed out|\bkilled\b|timeout", re.IGNORECASE)
_LOCK = re.compile(r"\block\b|\.lock\b|lock file|lockfile", re.IGNORECASE)


def left_behind(killed: Failure, later: Failure) -> bool:
    """Whether ``later`` is ``killed``'s call run again and refused by a lock the killed run
    left."""
    return (
        _KILLED.search(killed.error) is not None
        and _KILLED.search(later.error) is None
        and _LOCK.search(later.error) is not None
        and " ".join(killed.call.split()) == " ".join(later.call.split())
    )


_WAIT = re.compile(r"^(?:timeout|gtimeout)\s+(?:-\S+\s+)*\d+[smh]?\s+")
"""A ``timeout N`` wrapper: the call it runs is the same call as without it."""
_CHECKS = frozenset({"status", "whoami", "check", "doctor", "verify", "info", "list", "ls"})
"""The last word of a call that asks a program for its state (``gh auth status``)."""


def _core(call: str) -> list[str]:
    return [w.strip("'\"") for w in _WAIT.sub("", " ".join(call.split())).split()]


def checked_after(killed: Failure, log: Sequence[tuple[str, str]]) -> Failure | None:
    """The failed check of the state ``killed`` was to change, made after the same command had
    run (``gh auth status`` still "not logged into any GitHub hosts" after ``gh auth login
    --web``), when ``killed`` is a call the harness killed and nothing cured: the kill leaves
    its effect unknown, and the check is what the session learnt of it. A check is the
    command's program and first word with a word that asks for a state (``status``); the last
    such check after the command's first run is the verdict (``None`` when there is none)."""
    if killed.fixed or _KILLED.search(killed.error) is None:
        return None
    words = _core(killed.call)
    if len(words) < 2:
        return None
    ran = next((n for n, (call, _) in enumerate(log) if _core(call) == words), None)
    if ran is None:
        return None
    verdict = None
    for call, error in log[ran + 1 :]:
        check = _core(call)
        if (
            len(check) >= 2
            and check[:2] == words[:2]
            and check[-1] in _CHECKS
            and check != words
            and error
            and _KILLED.search(error) is None
        ):
            verdict = Failure(" ".join(check), error, False)
    return verdict


def groups(failures: Sequence[Failure]) -> list[list[int]]:
    """The failures (by position) joined by :func:`same_cause`, each group in order, the group
    that states the cause first: a failed install, else one that was got past, else the
    earliest. Groups of one are left out."""
    parent = list(range(len(failures)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(failures)):
        for j in range(i + 1, len(failures)):
            if root(i) != root(j) and same_cause(failures[i], failures[j]):
                parent[root(j)] = root(i)
    joined: dict[int, list[int]] = {}
    for i in range(len(failures)):
        joined.setdefault(root(i), []).append(i)
    result = []
    for members in joined.values():
        if len(members) < 2:
            continue
        lead = next(
            (i for i in members if _installs(failures[i].call) and not failures[i].fixed),
            next((i for i in members if failures[i].fixed), members[0]),
        )
        result.append([lead, *(i for i in members if i != lead)])
    return result


def chain(
    lead: str,
    others: Iterable[Failure],
    left: Iterable[Failure] = (),
    checked: Iterable[Failure] = (),
) -> str:
    """The lesson of ``lead`` (its content) with the other failures of its cause named after
    it, each with its error, what a killed call left behind (:func:`left_behind`) and what the
    check of its state said after it (:func:`checked_after`)."""
    text = lead.rstrip()
    text = text.removesuffix(".")
    text = text.removesuffix("; no retry worked")
    told = [f"`{f.call}` failed on the same cause ({f.error})" for f in others]
    told += [f"run again, it was refused by the lock the killed run left ({f.error})" for f in left]
    told += [f"after the command had run, `{f.call}` still failed ({f.error})" for f in checked]
    told = told[: _CHAIN_MAX - 1]
    return f"{text}; {'; '.join(told)}." if told else f"{text}."


def quoted_reason(passage: str, reasons: Iterable[str]) -> bool:
    """Whether the agent's ``passage`` is the sentence a mined failure already quotes as its
    reason (the lesson holds it; kept alone it is the same cause told again)."""
    said = " ".join(passage.split())
    for reason in reasons:
        head = " ".join(reason.split())[:REASON_PREFIX]
        if len(head) >= REASON_PREFIX // 2 and said.startswith(head):
            return True
    return False  # one error printed by two commands is not enough: two limits of the harness
    # (a timeout) meet unrelated calls, and each call's lesson is its own


__all__ = [
    "Failure",
    "chain",
    "checked_after",
    "groups",
    "left_behind",
    "quoted_reason",
    "same_cause",
]
