"""A writer killed mid-rewrite left a full-size temp copy of the store behind for good (issue 31
item 8c). Now the next locked write of the file removes the temp files of dead writers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.jsonl import read_jsonl
from swarmq.storage.locking import LocalLocks

REWRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.storage.locking import LocalLocks
    root = Path(sys.argv[1])
    store = KnowledgeStore(root / ".swarm", locks=LocalLocks(root / "locks"),
                           data_dir=root / "hive", project_name="repo")
    entry = store.swarm.read().entries[0]
    n = 0
    while True:  # rewrite the whole store again and again until killed
        n += 1
        store.swarm.update(entry.id, {"confidence": 0.5 + (n % 40) / 100})
    """
)


def _store(root: Path) -> KnowledgeStore:
    return KnowledgeStore(
        root / ".swarm",
        locks=LocalLocks(root / "locks"),
        data_dir=root / "hive",
        project_name="repo",
    )


def _temps(root: Path) -> list[Path]:
    return sorted((root / ".swarm").glob(".knowledge.jsonl.tmp-*"))


def test_a_writer_killed_mid_rewrite_leaves_no_temp_after_the_next_locked_write(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    store = _store(root)
    store.add_lesson("Always pin the redis client before calling celery in the build step")
    knowledge = root / ".swarm" / "knowledge.jsonl"
    first = json.loads(knowledge.read_text().splitlines()[0])
    lines = [
        json.dumps(
            {
                **first,
                "id": f"{n:08d}-0000-4000-8000-000000000000",
                "lesson": f"{first['lesson']} {n}",
            }
        )
        for n in range(98)
    ]
    knowledge.write_text(knowledge.read_text() + "\n".join(lines) + "\n")  # at the cap of 100
    left: list[Path] = []
    for _attempt in range(30):
        child = subprocess.Popen([sys.executable, "-c", REWRITER, str(root)])
        deadline = time.monotonic() + 20
        while not _temps(root) and time.monotonic() < deadline:
            time.sleep(0.0005)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        left = _temps(root)
        if left:
            break
    assert left, "no kill landed mid-rewrite in 30 attempts"
    assert read_jsonl(knowledge).corrupt == []  # the store itself is whole

    _store(root).add_lesson("Run the postgres migrations in a transaction so a deploy rolls back")
    assert _temps(root) == []
    assert len(knowledge.read_text().splitlines()) == 100
