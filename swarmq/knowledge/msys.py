"""Git for Windows' bash (MSYS) rewriting a call's argument into a Windows path.

Before a native Windows program sees its arguments, Git Bash converts each one it reads as a
POSIX path: ``/Query`` becomes ``C:/Program Files/Git/Query``, ``!/notes/a.md`` becomes
``!C:/Users/u/AppData/Local/Programs/Git/notes/a.md``. The program then fails in its own words
("pathspec did not match any files", "bad source", an invalid switch in the console's code
page), words shared with many unrelated mistakes; the one sign of this cause is the install root
spliced into the output where the call had the rest of the argument. Forge states it as a fact
of the machine and recall keys it by that sign, so both read it here.
"""

from __future__ import annotations

import re

_GIT_ROOT = re.compile(r"([^\s'\"=,:]?)([A-Za-z]:/(?:[^'\"\n/,:]+/)*?[Gg]it/)([^'\"\n,]{1,200})")
"""A path in a failure's output with Git for Windows' install root spliced in (``E:/Git/Query``,
``!C:/Users/u/AppData/Local/Programs/Git/!/notes.md``): its prefix character (``!``), the root,
and what followed the ``/`` the shell read as the filesystem's root."""


def rewritten_argument(call: str, output: str) -> tuple[str, str] | None:
    """An argument of ``call`` that Git Bash (MSYS) rewrote into a Windows path under Git's
    install root before the program saw it, as written and as the program showed it:
    ``!/notes/a.md`` became ``!C:/…/Programs/Git/notes/a.md``, so git finds no such pathspec or
    source. Any argument the shell reads as starting at the filesystem's root is rewritten
    alike; the root spliced into the output, with the rest of the argument after it, is the
    sign (the program's own words differ: "pathspec did not match", "bad source")."""
    if ":/" not in output:
        return None
    for found in _GIT_ROOT.finditer(output):
        prefix, root, tail = found.groups()
        tail = re.split(r":\s", tail, maxsplit=1)[0].rstrip(" .;)")
        written = f"{prefix}/{tail}"
        if (
            tail
            and re.search(rf"(?:^|[\s'\"=$]){re.escape(written)}", call)
            and f"{prefix}{root}" not in call
        ):
            return written, f"{prefix}{root}{tail}"
    return None


__all__ = ["rewritten_argument"]
