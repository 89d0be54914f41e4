"""Claude Code's refusal to edit a file changed on disk since it was read.

Claude Code's Edit and Write refuse a file whose contents differ from the agent's last Read of
it ("File has been unexpectedly modified. Read it again before attempting to write it.", or
"File has been modified since read"). Something other than the agent changed it: a formatter or
linter that rewrote it (``ruff format``, ``black``, ``prettier``, ``eslint --fix``, an editor's
format on save), or Windows (CRLF) line endings that the tool's view and the disk disagree on.
The refusal is one lesson whatever the file: read the file right before each edit, and when the
edit is still refused, write the whole file straight after a read. A refusal met once and got
past by the Read it asks for is the tool working as meant, no lesson; one refused again (or got
round by writing the file another way) is. The cause is stated when the
session shows it (a formatter run before the refusal, ``^M`` or CRLF in an output after it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from swarmq.forge._calls import as_text

STALE_READ = re.compile(
    r"File has been (?:unexpectedly )?modified(?: since (?:it was )?read)?\b", re.IGNORECASE
)
"""Claude Code's refusal, in its two wordings."""
_REWRITERS = re.compile(
    r"\b(?:ruff\s+format|ruff\s+check\b[^\n&|;]*--fix|black|prettier\b[^\n&|;]*--write|"
    r"eslint\b[^\n&|;]*--fix|isort|autopep8|gofmt\s+-w|cargo\s+fmt|dos2unix|unix2dos)\b"
)
"""Calls that rewrite files in place (formatters, fixing linters, line-ending converters)."""
_CRLF_SHOWN = re.compile(r"\^M\$|\bCRLF\b|\\r\\n|with CRLF line terminators")
"""An output that shows Windows line endings (``cat -A``'s ``^M$``, ``file``'s "with CRLF line
terminators", git's warnings)."""
CURE = (
    "Claude Code's Edit refuses a file changed on disk since its last Read: read the file again "
    "right before each Edit (after any formatter or linter run too), and when Edit is still "
    "refused, Write the whole file straight after a Read"
)


def stale_read(error: str) -> bool:
    """Whether ``error`` is Claude Code's refusal to write a file changed since it was read."""
    return STALE_READ.search(error) is not None


class _Refused(Protocol):
    """A failure waiting for its cure (its error, and what is said beside its rule)."""

    error: str
    also: str


@dataclass
class RewriteWatch:
    """What in the session may change files behind the agent's back, for the refusal's cause."""

    rewriter: str = ""
    """The last call that rewrote files in place (a formatter, a fixing linter)."""
    crlf: bool = False
    """An output showed Windows (CRLF) line endings."""

    def called(self, value: Any) -> None:
        """Note a command tool's call (as the transcript holds it)."""
        call = as_text(value)[:2000]
        found = _REWRITERS.search(call)
        if found and "--check" not in call:
            self.rewriter = found.group(0)

    def explain(self, output: str, waiting: Iterable[_Refused]) -> None:
        """Note an output while failures wait, and give each waiting refusal the cause the
        session shows so far (it is stated beside the lesson's rule)."""
        if not self.crlf and _CRLF_SHOWN.search(output, 0, 4000) is not None:
            self.crlf = True
        for failure in waiting:
            if stale_read(failure.error):
                failure.also = self.cause()

    def cause(self) -> str:
        """The cause the session shows so far, as a clause of the lesson (``""``: none)."""
        causes = []
        if self.rewriter:
            causes.append(f"`{self.rewriter}` rewrote files in place")
        if self.crlf:
            causes.append("the file has Windows (CRLF) line endings")
        return "here " + " and ".join(causes) if causes else ""


def stale_read_fact(error: str) -> str:
    """The lesson's rule for the refusal (``""`` when ``error`` is not it); its cause, when the
    session shows one, is said beside it (:meth:`RewriteWatch.explain`)."""
    return CURE if stale_read(error) else ""


__all__ = ["CURE", "STALE_READ", "RewriteWatch", "stale_read", "stale_read_fact"]
