"""A workspace copied and given a new id (issue 31 item 8b): its copied fence records named the
old id, so every write to the copy was refused for good. ``swarmq workspace reidentify`` gives
the copy its own id and renames the records; both workspaces then write, under their own names."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import FencedOff, LocalLocks
from swarmq.storage.workspace_id import ID_FILE, ensure_root_id, forget_root_ids, read_root_id

LESSONS = [
    "Always pin the redis client before calling celery in the build step",
    "Run the postgres migrations in a transaction so a failed deploy rolls back cleanly",
]


def _store(workspace: Path) -> KnowledgeStore:
    return KnowledgeStore(
        workspace / ".swarm",
        locks=LocalLocks(workspace.parent / f"{workspace.name}-locks"),
        data_dir=workspace / "hive",
        project_name="repo",
    )


def _lessons(workspace: Path) -> list[str]:
    lines = (workspace / ".swarm" / "knowledge.jsonl").read_text().splitlines()
    return [json.loads(line)["lesson"] for line in lines]


def test_a_copy_reidentified_writes_under_its_own_id(tmp_path: Path) -> None:
    original = tmp_path / "original"
    ensure_root_id(original, "single-host")
    _store(original).add_lesson(LESSONS[0])
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    (copy / ID_FILE).unlink()  # what docs/locking.md used to advise
    ensure_root_id(copy, "single-host")
    forget_root_ids()
    with pytest.raises(FencedOff, match="two lock names for one file"):
        _store(copy).add_lesson(LESSONS[1])  # refused by the copied fence record, for good

    done = subprocess.run(
        [sys.executable, "-m", "swarmq.cli", "workspace", "reidentify", str(copy), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["locks"] == "single-host" and report["rewritten"] and not report["skipped"]
    forget_root_ids()
    old, new = read_root_id(original), read_root_id(copy)
    assert old is not None and new is not None and old.id != new.id == report["new_id"]

    _store(copy).add_lesson(LESSONS[1])
    _store(original).add_lesson(LESSONS[1])
    assert _lessons(copy) == LESSONS and _lessons(original) == LESSONS
