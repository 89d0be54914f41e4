"""cmd.exe and PowerShell idioms typed into Git Bash, and their bash form.

On Windows, Claude Code's Bash tool runs Git Bash. An agent that knows it is on Windows often
writes cmd.exe's or PowerShell's syntax into it (``cd /d C:\\dir``, ``type file``, ``2>$null``,
``chcp 65001``, ``set VAR=x && cmd``); bash refuses each in its own words ("cd: too many
arguments", "type: file: not found", "$null: ambiguous redirect", "chcp: command not found") or,
for ``set``, silently sets nothing. The call the agent makes next is the next step of its task,
not what the next session needs: that is the fact (the shell is bash) and the bash spelling of
the idiom it tried. The idiom is recognised in the call and confirmed by bash's own error, so a
``type`` or ``set`` that bash understood never counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STEP_START = r"(?:^|&&|\|\||;|\|)\s*"


@dataclass(frozen=True)
class _Idiom:
    """One idiom: how it shows in a call, bash's error for it (``None``: bash says nothing, so
    it only counts beside another idiom bash refused), and its bash form."""

    in_call: re.Pattern[str]
    in_error: re.Pattern[str] | None
    said: str
    alone: bool = False
    """Whether the error names the idiom so plainly that it needs no sign of bash around it:
    a POSIX program complaining of a cmd switch as a path it cannot remove or list
    (``rmdir: failed to remove '/s'``) prints no ``bash: line 1:`` prefix of its own."""


_IDIOMS = (
    _Idiom(
        re.compile(_STEP_START + r"cd\s+/d\s", re.IGNORECASE),
        re.compile(r"\bcd: too many arguments"),
        'cmd\'s `cd /d C:\\dir` is `cd /c/dir` (or a quoted forward-slash path `cd "C:/dir"`)',
    ),
    _Idiom(
        re.compile(_STEP_START + r"type\s+[\"']?(?:[A-Za-z]:)?[\\/\w.]", re.IGNORECASE),
        re.compile(r"\btype: .+: not found"),
        "cmd's `type FILE` is `cat FILE`",
    ),
    _Idiom(
        re.compile(r"[12*]?>\s*\$null\b", re.IGNORECASE),
        re.compile(r"\$null: ambiguous redirect"),
        "PowerShell's `2>$null` is `2>/dev/null`",
    ),
    _Idiom(
        re.compile(_STEP_START + r"chcp\b", re.IGNORECASE),
        re.compile(r"\bchcp(?:\.com)?: command not found"),
        "there is no `chcp` (no code page to set): give Python's output its encoding with "
        "`PYTHONIOENCODING=utf-8 command`",
    ),
    _Idiom(
        re.compile(
            _STEP_START
            + r"(?:rmdir|rd|del|erase|dir|copy|move|xcopy)\s+(?:[^\s&|;]+\s+)*?/[A-Za-z]\b",
            re.IGNORECASE,
        ),
        re.compile(
            r"\b(?:rmdir|dir|ls|rm|cp|mv): (?:failed to remove|cannot remove|cannot access|"
            r"cannot stat|cannot open|cannot move) '/[A-Za-z]'|"
            r"\b(?:rd|del|erase|copy|move|xcopy): command not found"
        ),
        "cmd's switches are read as paths (`rmdir /s /q DIR` is `rm -rf DIR`, `del /f /q FILE` "
        "is `rm -f FILE`, `dir /b` is `ls -1`, `copy`/`move` are `cp`/`mv`)",
        alone=True,
    ),
    _Idiom(
        re.compile(_STEP_START + r"set\s+[A-Za-z_]\w*=[^\s&|;]*\s*&&", re.IGNORECASE),
        None,
        "cmd's `set VAR=value && command` sets nothing in bash: write `VAR=value command` "
        "(or `export VAR=value`)",
    ),
)
BASH_FORMS = "`cd /c/dir`, `cat FILE`, `2>/dev/null`, `VAR=value command`, `rm -rf DIR`, no `chcp`"
"""Every idiom's bash form, stated with any one of them: the next session may type another."""
_BASH_ERROR = re.compile(r"(?:^|/)(?:usr/)?(?:bin/)?bash: line \d+: |^bash: ", re.MULTILINE)
"""Where the error says it comes from bash (Git Bash on Windows prints ``/usr/bin/bash: line 1:``)."""
_CMDLET = re.compile(r"\b([A-Z][a-z]+-[A-Z][A-Za-z]+): command not found")
"""A PowerShell cmdlet bash was asked to run, beside an idiom (``Get-ChildItem … 2>$null``)."""


def cmd_idioms(call: str, error: str) -> str:
    """The fact for a call that typed cmd.exe or PowerShell idioms into bash, with the bash form
    of each idiom the call holds; ``""`` unless bash refused at least one of them."""
    if not call:
        return ""
    present = [idiom for idiom in _IDIOMS if idiom.in_call.search(call)]
    refused = [i for i in present if i.in_error is not None and i.in_error.search(error)]
    if not refused or (_BASH_ERROR.search(error) is None and not any(i.alone for i in refused)):
        return ""
    said = "; ".join(idiom.said for idiom in present)
    said += f"; write bash syntax throughout ({BASH_FORMS})"
    cmdlet = _CMDLET.search(error)
    if cmdlet:
        said += (
            f"; `{cmdlet.group(1)}` is a PowerShell cmdlet: run it with the PowerShell tool or "
            "`powershell -Command`"
        )
    return f"the Bash tool on Windows is Git Bash, not cmd.exe or PowerShell: {said}"


__all__ = ["BASH_FORMS", "cmd_idioms"]
