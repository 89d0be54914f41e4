"""The first write beside a canonical file drops a ``.gitignore`` into swarmq's own side
directory, so a project under Git never sees lock and fence records as changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from swarmq.storage.atomic import IGNORE_BODY, SIDE_DIR, commit_lock, write_atomic
from swarmq.storage.locking import LocalLocks


def test_first_write_ignores_the_side_directory_and_keeps_the_projects_gitignore(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".swarm").mkdir(parents=True)
    (project / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
    target = project / ".swarm" / "knowledge.jsonl"
    locks = LocalLocks(tmp_path / "locks")
    with locks.hold("knowledge") as lease, commit_lock(target):
        write_atomic(target, '{"id": "a"}\n', lease=lease)
    ignore = project / ".swarm" / SIDE_DIR / ".gitignore"
    assert ignore.read_text(encoding="utf-8") == IGNORE_BODY
    assert (project / ".gitignore").read_text(encoding="utf-8") == "node_modules/\n"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    status = subprocess.run(
        ["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".swarm/knowledge.jsonl" in status and SIDE_DIR + "/" not in status, status
