"""A call the agent's tool stopped at its time limit is cured only by the same step run otherwise.

A call that timed out ("Command timed out after 2m 0s") was neither refused nor wrong: it was
still running or waiting (for a login in a browser, for a prompt's answer, for a slow install)
when the tool gave up on it. Another command of the same program that returns in time
(``gh repo clone`` after ``gh auth login`` timed out) shows nothing about how to get that step
done: it is the next step of the task. The cure runs the same program's same subcommand
otherwise (``echo TOKEN | gh auth login --with-token``; ``cd other && npm install``), or another
program altogether in its place (a stand-in, judged as before).
"""

from __future__ import annotations

import re

TOOL_TIMEOUT = re.compile(r"\bcommand timed out\b", re.IGNORECASE)
"""The agent's tool stopping a call at its time limit (Claude Code: "Command timed out after 2m
0s"; Codex: "command timed out after 10043 milliseconds"), not a program's own network timeout
("Read timed out"), which is a refusal of the machine."""

_SEPARATORS = re.compile(r"\s*(?:&&|\|\||[|;])\s*")
_OPTION = re.compile(r"^-")


def _words(call: str) -> list[str]:
    return [word.strip("'\"") for word in call.split()]


def _subcommand(words: list[str], at: int) -> str:
    """The first word after the program at ``at`` that is no option (``""`` when none)."""
    for word in words[at + 1 :]:
        if not _OPTION.match(word):
            return word.lower()
    return ""


def _runs_at(words: list[str], runs: str) -> list[int]:
    """Where ``words`` run the program ``runs`` (its name, or a path ending in it)."""
    runs = runs.lower()
    return [
        at
        for at, word in enumerate(words)
        if word.lower() == runs or re.split(r"[/\\]", word.lower())[-1] == runs
    ]


def same_step(failed: str, call: str, runs: str) -> bool:
    """Whether ``call`` runs the program ``runs`` with the subcommand the failed call gave it
    (any subcommand when the failed call gave none): the same step, run otherwise."""
    failed_words = _words(failed)
    failed_at = _runs_at(failed_words, runs)
    wanted = _subcommand(failed_words, failed_at[0]) if failed_at else ""
    for step in _SEPARATORS.split(call):
        words = _words(step)
        for at in _runs_at(words, runs):
            if not wanted or _subcommand(words, at) == wanted:
                return True
    return False


def elsewhere_after_timeout(failed: str, error: str, call: str, runs: str) -> bool:
    """Whether ``call``, running the timed-out call's program ``runs``, runs another step of it:
    no cure of the time-out (another program in its place is judged as a stand-in)."""
    if not TOOL_TIMEOUT.search(error) or not runs:
        return False
    return bool(_runs_at(_words(call), runs)) and not same_step(failed, call, runs)


def same_step_after_timeout(failed: str, error: str, call: str, runs: str) -> bool:
    """Whether ``call`` runs the timed-out call's step (program ``runs``, same subcommand) again
    in another form, whatever runs first (``echo TOKEN | gh auth login --with-token``, which
    starts with a program that only prints, feeds the step its answer): the cure's shape."""
    return bool(TOOL_TIMEOUT.search(error)) and bool(runs) and same_step(failed, call, runs)
