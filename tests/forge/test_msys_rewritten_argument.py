"""Git Bash (MSYS) rewriting a path argument into one under Git's install root: a fact forge
keeps from the first occurrence, and a signature recall finds again whatever git then said.

The session is written in the shape of the real ones of the h9 replay set
(eval/replay/histories-h9): a Windows vault whose governance files live in a folder named
``!``; ``git mv '!/notes/a.md' …`` fails with "bad source, source=!C:/…/Programs/Git/notes/a.md"
(the shell rewrote the argument before git saw it), the agent tries quoting, then moves the file
with Python. A later session's ``git add "!/!/b.md"`` fails with "pathspec
'!C:/…/Git/!/b.md' did not match any files": other words, the same cause.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmq.flywheel.bridge import publish
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._envfacts import windows_fact
from swarmq.forge.extract import forge_transcript
from swarmq.knowledge.msys import rewritten_argument
from swarmq.knowledge.signature import MSYS_REWRITE, failure_signature, failure_signatures
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession

ROOT = "C:/Users/writer/AppData/Local/Programs/Git"
VAULT = 'cd "c:\\Users\\writer\\Documents\\VAULT" && '


def test_a_bang_path_rewritten_under_gits_root_is_a_fact_kept_from_the_first_session(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    session = (
        ClaudeSession()
        .user("move today's note out of the ! folder")
        .bash(
            VAULT + "git mv '!/DAILY/2026-03-21.md' 'DAILY/2026-03-21.md'",
            "Exit code 128\nfatal: Invalid path '/!': No such file or directory",
            error=True,
        )
        .bash(
            VAULT + "git mv -- '!/DAILY/2026-03-21.md' 'DAILY/2026-03-21.md' 2>&1",
            f"Exit code 128\nfatal: bad source, source=!{ROOT}/DAILY/2026-03-21.md, "
            "destination=DAILY/2026-03-21.md",
            error=True,
        )
        .bash(
            VAULT + "python3 -c \"import shutil; shutil.move('!/DAILY/2026-03-21.md', 'DAILY')\"",
            "",
        )
    )
    found = forge_transcript(session.write(tmp_path / "s.jsonl"), layout, locks).found
    lessons = [c.content for c in found if "MSYS" in c.content]
    assert len(lessons) == 1, [c.content for c in found]
    assert (
        "rewrites an argument beginning with `!/` into a path under Git's install root"
        in (lessons[0])
    )
    assert "`MSYS_NO_PATHCONV=1`" in lessons[0] and "`./!/…`" in lessons[0]
    assert failure_signature(lessons[0]) == MSYS_REWRITE


def test_the_recurrence_in_other_words_has_the_lessons_signature() -> None:
    recurrence = (
        '$ cd "C:/Users/writer/Documents/VAULT" && git add "!/!/LEVELSET.md" && git commit -m x\n'
        f"Exit code 128\nfatal: pathspec '!{ROOT}/!/LEVELSET.md' did not match any files"
    )
    assert failure_signatures(recurrence)[0] == MSYS_REWRITE
    switch = "$ schtasks /Query /TN Daily\nERROR: Invalid argument/option - 'E:/Git/Query'."
    assert failure_signatures(switch)[0] == MSYS_REWRITE


def test_a_real_path_under_gits_root_and_a_plain_pathspec_miss_are_not_rewrites() -> None:
    under_root = "ls: cannot access 'C:/Program Files/Git/usr/lib': No such file or directory"
    assert rewritten_argument("ls /c/Program\\ Files/Git/usr/lib", under_root) is None
    assert rewritten_argument("ls '/c/Program Files/Git/usr/lib'", under_root) is None
    assert windows_fact("ls '/c/Program Files/Git/usr/lib'", under_root) == ""
    plain = "$ git add notes/a.md\nfatal: pathspec 'notes/a.md' did not match any files"
    assert MSYS_REWRITE not in failure_signatures(plain)
    api = rewritten_argument("gh api /repos/o/r", "error: C:/Program Files/Git/repos/o/r: 404")
    assert api == ("/repos/o/r", "C:/Program Files/Git/repos/o/r")
    assert "`//…`" in windows_fact("gh api /repos/o/r", "x C:/Program Files/Git/repos/o/r")


class _Sink:
    """The knowledge store's side of the bridge, recording what it was given."""

    def __init__(self) -> None:
        self.added: list[dict[str, Any]] = []

    @property
    def swarm(self) -> Any:
        return None

    def current_phase(self) -> int | None:
        return None

    def add_lesson(self, lesson: str, **fields: Any) -> Any:
        self.added.append({"lesson": lesson, **fields})
        return None


def test_condensing_a_long_lesson_keeps_the_signature_read_from_the_whole_one() -> None:
    call = VAULT + "git mv '!/DAILY/2026-03-21.md' 'DAILY/2026-03-21.md' 2>&1 || git mv -- x y"
    error = f"fatal: bad source, source=!{ROOT}/DAILY/2026-03-21.md, destination=DAILY/x.md"
    content = f"`{call}` failed ({error}); " + windows_fact(call, error) + "; no retry worked."
    whole = failure_signature(content)
    assert whole == MSYS_REWRITE
    sink = _Sink()
    candidate = {
        "content": content,
        "type": "learning",
        "metadata": {"failure_signature": whole},
    }
    publish(sink, "pool/x.json", candidate)
    (added,) = sink.added
    assert failure_signature(added["lesson"]) != whole  # condensing cut the call and the error
    assert added["extra"] == {"failure_signature": MSYS_REWRITE}
    plain = {"content": "Use the project's venv for pytest here.", "metadata": {}}
    publish(sink, "pool/y.json", plain)
    assert sink.added[-1]["extra"] is None
