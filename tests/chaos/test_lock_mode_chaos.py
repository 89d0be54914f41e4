"""Same-host locks on a cluster workspace (issue 31 item 8a): through the Python API a
``LocalLocks`` could write a workspace whose workers hold Redis locks, and the two never
excluded each other (436 of 1,170 adds lost). Now the first hold is refused, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks, LockModeRefused
from swarmq.storage.workspace_id import ensure_root_id


def _store(workspace: Path) -> KnowledgeStore:
    return KnowledgeStore(
        workspace / ".swarm",
        locks=LocalLocks(workspace / ".runtime" / "locks"),
        data_dir=workspace / "hive",
        project_name="repo",
    )


def test_local_locks_on_a_cluster_workspace_are_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "cluster-ws"
    ensure_root_id(workspace, "cluster")
    store = _store(workspace)
    with pytest.raises(
        LockModeRefused, match=r'records "locks": "cluster" in its \.swarmq-workspace'
    ):
        store.add_lesson("Always pin the redis client before calling celery in the build step")
    knowledge = workspace / ".swarm" / "knowledge.jsonl"
    assert not knowledge.exists() or knowledge.read_text() == ""


def test_local_locks_on_a_single_host_workspace_still_write(tmp_path: Path) -> None:
    workspace = tmp_path / "single-ws"
    ensure_root_id(workspace, "single-host")
    result = _store(workspace).add_lesson(
        "Always pin the redis client before calling celery in the build step"
    )
    assert result.outcome == "added"
