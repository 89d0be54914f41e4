"""The working call that did what a failed call meant to, told apart from it as its cure.

A lesson that ends "`X` worked instead" leaves the next session to work out what X changed. When
the working call is the failed one with a single change, that change is the cure and is said in
words, the same for every project:

- a program missing on the machine, piped into (``curl … | jq .`` where ``jq`` is not
  installed): the same command without that stage worked, its raw output read as printed;
- a command substitution the shell refused ("syntax error near unexpected token `('" for
  ``docker exec $(docker ps -q …) …``: some harnesses escape the ``$(`` before the shell sees
  it): the inner command run as a separate call, its output pasted in literally, worked;
- a relative path not found (``cd frontend``: "No such file or directory", ``docker build
  ./backend``: "path not found") and the same steps then working from another directory (``cd
  /root/app && …``, or without the ``cd``): an agent's shell keeps its working directory from
  one call to the next, so an earlier ``cd`` still held; an absolute path does not depend on it.
"""

from __future__ import annotations

import re

from swarmq.forge._calls import CD_PREFIX, normal, program

_STAGE = r"\|\s*{name}(?:\s|$)"
_SUBSTITUTION = re.compile(r"\$\(")
_SYNTAX = re.compile(r"syntax error near unexpected token", re.IGNORECASE)
_NOT_FOUND = re.compile(r"No such file or directory|path \"?[^\"\s]+\"? not found", re.IGNORECASE)
MIN_PREFIX_WORDS = 2
"""Words of the failed call before its ``$(`` that the working call must start with (``docker
exec``): fewer say nothing of it being the same command."""
_LEADING_CD = re.compile(r"^\s*cd\s+(?P<dir>\"[^\"\n]*\"|'[^'\n]*'|(?:\\ |[^\s;&])+)\s*(?:&&|;)")


def without_stage(failed: str, fixed: str, missing: str) -> str:
    """The cure of a missing program piped into, when ``fixed`` is the same command without
    that stage (``""`` otherwise)."""
    if not missing or not re.search(_STAGE.format(name=re.escape(missing)), failed):
        return ""
    before = failed.split("|", 1)[0]
    if missing in re.findall(r"[\w.-]+", fixed) or program(before) != program(fixed):
        return ""
    return f"the same command without {missing} worked, its raw output read as printed"


def split_substitution(failed: str, fixed: str, error: str) -> str:
    """The cure of a command substitution the shell refused, when ``fixed`` is the command
    with a literal value where the ``$(…)`` was (``""`` otherwise)."""
    start = failed.find("$(")
    if start <= 0 or not _SYNTAX.search(error) or _SUBSTITUTION.search(fixed):
        return ""
    prefix = normal(failed[:start])
    if len(prefix.split()) < MIN_PREFIX_WORDS or not normal(fixed).startswith(prefix):
        return ""
    return (
        "this shell refused the command substitution `$(…)`: run the inner command as a "
        "separate call first, then paste its output into the command literally"
    )


def _leading_cd(call: str) -> str:
    match = _LEADING_CD.match(call)
    return match.group("dir").strip("\"'") if match else ""


def moved_workdir(failed: str, fixed: str, error: str) -> str:
    """The cause and cure of a relative path not found that the same steps then got past from
    another directory (``""`` when the two calls differ otherwise, or the error is another)."""
    if _NOT_FOUND.search(error) is None:
        return ""
    before, after = _leading_cd(failed), _leading_cd(fixed)
    absolute = ("/", "~")
    if before.startswith(absolute) or before == after:
        return ""  # an absolute directory does not depend on where the shell was
    if after and not after.startswith(absolute):
        return ""
    if normal(CD_PREFIX.sub("", failed)) != normal(CD_PREFIX.sub("", fixed)):
        return ""
    if after:
        return (
            "an earlier `cd` still held (the shell keeps its working directory between calls): "
            f"use an absolute path, `cd {after}`"
        )
    return (
        f"the shell was still in `{before}` from an earlier `cd` (it keeps its working directory "
        "between calls): use an absolute path in `cd`"
    )
