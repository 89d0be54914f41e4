"""A 50 MB message (a pasted dump) costs forge neither its memory nor the rest of the session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.forge.sessions import ClaudeSession
from tests.support import REPO

FORGE = """
import json, sys
from pathlib import Path
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks
work = Path(sys.argv[2])
result = forge_transcript(Path(sys.argv[1]), AgentsLayout(work / "ws"), LocalLocks(work / "locks"))
print(json.dumps({"rejected": dict(result.rejected),
                  "found": [c.content for c in result.found],
                  # VmHWM belongs to this process image: ru_maxrss would carry the parent's
                  # peak across fork and exec (a long pytest run's, not forge's).
                  "peak_kib": int(next(line.split()[1] for line in
                                       open("/proc/self/status") if line.startswith("VmHWM:")))}))
"""


def test_a_huge_message_is_skipped_and_the_rest_forged_in_bounded_memory(tmp_path: Path) -> None:
    session = (
        ClaudeSession()
        .user("run the migration script")
        .say("Always run the tests first because the build breaks otherwise. " * 780_000)
        .bash(
            "python scripts/migrate.py",
            "Exit code 127\n/bin/bash: python: command not found",
            error=True,
        )
        .say("The machine has no `python` on PATH, so I'm using python3 instead.")
        .bash("python3 scripts/migrate.py", "migrated 12 tables")
    )
    path = session.write(tmp_path / "s.jsonl")
    run = subprocess.run(
        [sys.executable, "-c", FORGE, str(path), str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    answer = json.loads(run.stdout)
    peak_mib = answer["peak_kib"] / 1024
    assert answer["rejected"].get("oversized") == 1
    assert any(c.startswith("`python scripts/migrate.py` failed") for c in answer["found"])
    # Reading the 50 MB line costs its bytes, text and parsed value (~150 MiB with the
    # interpreter); classifying it as one passage cost ~800 MiB.
    assert peak_mib < 400, f"forge peaked at {peak_mib:.0f} MiB"
