"""A failure told twice: the agent saying a program is missing, beside that program's failed call.

When ``ruby -e …`` fails with "ruby: command not found", forge keeps the call, its error and
what worked instead as one tool-error lesson. The agent then often says the same in its own
words ("`ruby` isn’t installed in this workspace, so I’m switching to Node"; "Windows 上不支持
`python3` 命令"): a second candidate of the same fact, worded without the call or its error, so
the knowledge store holds the fact twice and the prose copy recalls nothing the call does not.
The sentence is folded into the tool-error lesson, that is, dropped. Only a sentence that names
the failed program in a code span **and** says it is missing or unsupported is folded: one that
says anything else about the program (how to run it, which version) is a lesson of its own.

Likewise the agent's announcement that it reruns a refused call with escalated permissions
("Staging failed because the sandbox cannot write `.git/index.lock`. I'm rerunning the commit
with escalated permissions"; "提交被沙箱拦住了，原因是无法写 `.git/index.lock`。我改为申请一次提权…"):
the refusal and the escalation are forged from the calls themselves, so a sentence that names,
in a code span, what a failed call's error names, and says it escalates, is the same fact again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from swarmq.forge._calls import program

_CALL = re.compile(r"^`([^`\n]+)` failed \(")
"""A tool-error lesson opens with the failed call (see ``_sequences.Sequence.content``)."""
_SAID_MISSING = re.compile(r"`([^`\n]{1,60})` is not installed here")
"""A tool-error lesson's own statement of the program that is missing (see ``_envfacts``): the
program a chain's later step ran (``ls …; sudo -n true`` → ``sudo``) is named there."""
_SPAN = re.compile(r"`([^`\n]{1,60})`")
_WORD = re.compile(r"(?<![\w./\\-])[A-Za-z][\w+-]*(?![\w./\\-])")
"""A word standing alone (not part of a path or a file name: ``…/powershell/x.ps1`` is no name)."""
_NAMED_MIN = 3
"""A failed program's name written as a plain word counts from this length: ``go``, ``gh`` or
``rg`` in prose are too often other words or parts of a sentence to say which program is meant
(``git``, ``npm`` or ``pip`` are not)."""
_MISSING = re.compile(
    r"(?:is ?n[o']t|not) (?:installed|available|on (?:the )?path|found|supported)|"
    r"command not found|no such (?:command|program)|"
    r"不支持|没(?:有)?安装|未安装|不存在|找不到|"  # Chinese
    r"インストールされていない|見つかりません|"  # Japanese
    r"없어서|없습니다|설치되어 있지 않|"  # Korean
    r"không có|chưa cài",  # Vietnamese
    re.IGNORECASE,
)
"""A program said to be missing or unsupported, in the languages forge reads."""


_ERROR = re.compile(r"^`[^`\n]+` (?:failed|was refused) \((.+?)\)(?:;|\.|$)", re.DOTALL)
"""The error a tool-error lesson quotes after its call."""
_ESCALATES = re.compile(
    r"\bescalat|\belevated (?:permission|access|shell|sandbox)|require_escalated|"
    r"提权|权限提升|権限(?:を)?昇格|昇格して|권한 상승|상승된 권한",
    re.IGNORECASE,
)
"""The agent saying it reruns a call outside the sandbox, in the languages forge reads."""
_NAMED_SPAN_MIN = 5
"""A code span this long at least can name what an error names (``.git/index.lock``); a short
one (``git``) names a program, not the thing refused."""


def failed_errors(contents: Iterable[str]) -> list[str]:
    """The errors (lower-cased) the tool-error lessons ``contents`` quote."""
    errors = []
    for content in contents:
        found = _ERROR.match(content)
        if found:
            errors.append(found.group(1).lower())
    return errors


def announces_escalation(passage: str, errors: list[str]) -> bool:
    """Whether the agent's ``passage`` says it escalates past a refusal one of ``errors`` names
    (a code span of the passage occurs in that error)."""
    if not errors or _ESCALATES.search(passage) is None:
        return False
    spans = [
        span.strip().lower()
        for span in _SPAN.findall(passage)
        if len(span.strip()) >= _NAMED_SPAN_MIN
    ]
    return any(span in error for span in spans for error in errors)


def failed_programs(contents: Iterable[str]) -> set[str]:
    """The programs (lower-cased) whose calls the tool-error lessons ``contents`` report failed."""
    programs = set()
    for content in contents:
        call = _CALL.match(content)
        if call:
            name = program(call.group(1)).lower()
            if name:
                programs.add(name)
        programs.update(found.group(1).strip().lower() for found in _SAID_MISSING.finditer(content))
    return programs


def restates(passage: str, programs: set[str]) -> bool:
    """Whether the agent's ``passage`` only says that one of ``programs`` is missing."""
    if not programs:
        return False
    text = passage.replace("’", "'")
    if _MISSING.search(text) is None:
        return False
    if any(span.strip().lower() in programs for span in _SPAN.findall(text)):
        return True
    return any(
        len(word) >= _NAMED_MIN and word.lower() in programs for word in _WORD.findall(text)
    )  # named as a word ("PowerShell not available in this shell" after ``powershell`` failed)


__all__ = ["announces_escalation", "failed_errors", "failed_programs", "restates"]
