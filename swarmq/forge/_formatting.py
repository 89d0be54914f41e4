"""A formatter's check that failed on unformatted files, cured by running the formatter.

``ruff format --check``, ``black --check`` and ``prettier --check`` only report ("Would
reformat: src/x.py", "2 files would be reformatted", "Code style issues found"); the code is
not wrong, and the cure is the formatter itself, run before the check. Such a failure is no
lesson on its own (the files were merely unformatted that once), so it is kept only when the
session shows the cure: the formatter ran, then the same check passed. The next session then
runs the formatter before its gate instead of failing it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CHECKS = (
    ("ruff format", re.compile(r"\bruff\s+format\b[^\n&|;]*--check\b")),
    ("black", re.compile(r"\bblack\b[^\n&|;]*--check\b")),
    ("prettier --write", re.compile(r"\bprettier\b[^\n&|;]*--check\b")),
)
"""Each formatter (as its formatting call starts) and how its check shows in a call."""
_REPORTS = re.compile(
    r"^(?:Would reformat:? .+|would reformat .+|\d+ files? would be reformatted.*|"
    r"\[warn\] Code style issues found.*)$",
    re.MULTILINE | re.IGNORECASE,
)
"""What the check prints for files it would change (ruff, black, prettier)."""


def formatter_check(call: str, output: str) -> str:
    """The formatter whose check ``call`` ran and found unformatted files (``"ruff format"``),
    ``""`` when it is no such failure."""
    if _REPORTS.search(output) is None:
        return ""
    return next((name for name, check in _CHECKS if check.search(call)), "")


def check_report(output: str) -> str:
    """The check's own lines about the files it would change (its error for the lesson)."""
    lines = [found.group(0).strip() for found in _REPORTS.finditer(output)]
    return "; ".join([*lines[:2], *lines[-1:]] if len(lines) > 3 else lines)


def formats(call: str, formatter: str) -> bool:
    """Whether ``call`` runs ``formatter`` to format (not its check)."""
    if formatter not in call:
        return False
    return not any(check.search(call) for _, check in _CHECKS)


def _checks(call: str, formatter: str) -> bool:
    return any(check.search(call) for name, check in _CHECKS if name == formatter)


def formatter_fact(call: str, error: str) -> str:
    """The lesson's rule for a formatter's failed check (``""`` when ``error`` is none)."""
    formatter = formatter_check(call, error)
    if not formatter:
        return ""
    check = f"{formatter.removesuffix(' --write')} --check"
    return (
        f"`{check}` only reports unformatted files: run the formatter (`{formatter} .`) before "
        "the check, then the check passes"
    )


@dataclass
class _Waiting:
    tool: str
    call: str
    error: str
    formatter: str
    ran: str = ""
    """The formatting call run since the check failed (``""``: not yet)."""


@dataclass(frozen=True)
class Reformatted:
    """A check that failed, the formatter run after it, and the same check then passing."""

    tool: str
    check: str
    error: str
    formatter: str


@dataclass
class FormatterWatch:
    """Follows one session's formatter checks until the formatter runs and the check passes."""

    waiting: list[_Waiting] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    """Formatters whose lesson this session already gave."""

    def failed(self, tool: str, call: str, whole: str, output: str) -> bool:
        """Note a call's failure (``call`` as the lesson shows it, ``whole`` unclipped); ``True``
        when it is a formatter's check that now waits."""
        formatter = formatter_check(whole, output[:3000])
        if not formatter:
            return False
        self.waiting = [w for w in self.waiting if w.call != call][-3:]
        self.waiting.append(_Waiting(tool, call, check_report(output[:3000]), formatter))
        return True

    def worked(self, tool: str, call: str, whole: str) -> Reformatted | None:
        """Note a call that worked: the lesson when it is the check passing after the formatter."""
        if not self.waiting:
            return None
        for waiting in self.waiting:
            if waiting.tool != tool:
                continue
            if waiting.ran and (call == waiting.call or _checks(whole, waiting.formatter)):
                self.waiting.remove(waiting)
                if waiting.formatter in self.seen:
                    return None  # the same formatter's lesson once a session
                self.seen.add(waiting.formatter)
                return Reformatted(tool, waiting.call, waiting.error, waiting.ran)
            if formats(whole, waiting.formatter):
                waiting.ran = call
        return None


__all__ = [
    "FormatterWatch",
    "Reformatted",
    "check_report",
    "formats",
    "formatter_check",
    "formatter_fact",
]
