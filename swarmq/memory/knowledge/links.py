"""The link tier: worktrees (or similar projects) sharing one store in the data dir.

``link`` writes ``.swarm/link.json`` (``{version: 1, linkId, createdAt, source}``) and copies
this worktree's entries that the shared store lacks (by id) into it, with outcome counters
reset (opencode-swarm's "outcome-history reset"); the local ``knowledge.jsonl`` is left where it
is and reported as orphaned. ``unlink`` copies shared entries the local store lacks back first
(unless ``copy_back=False``) and then removes the pointer. Receipts never follow a link.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.memory.atomic import write_json_atomic
from swarmq.memory.knowledge.files import LINK_FILE, TierFiles
from swarmq.memory.knowledge.model import v1_outcomes
from swarmq.memory.knowledge.project import KnowledgeStore, read_link
from swarmq.memory.knowledge.store import TierStore
from swarmq.memory.paths import check_id


@dataclass(frozen=True, slots=True)
class LinkStatus:
    linked: bool
    link_id: str | None
    store: Path
    entries: int
    orphaned_local_file: bool
    """A regular local knowledge.jsonl beside link.json: ignored, the shared store wins."""

    def as_dict(self) -> dict[str, Any]:
        return {"linked": self.linked, "link_id": self.link_id, "store": str(self.store),
                "entries": self.entries, "orphaned_local_file": self.orphaned_local_file}


def git_common_dir(start: Path) -> Path | None:
    """The repository's common git dir (shared by all its worktrees), if any."""
    for directory in [start, *start.parents]:
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git.resolve()
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                gitdir = (directory / text.split(":", 1)[1].strip()).resolve()
                common = gitdir / "commondir"
                if common.is_file():
                    return (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
                return gitdir
    return None


def default_link_id(workspace: Path) -> str:
    """The project hash: every worktree of one repository gets the same id."""
    anchor = git_common_dir(workspace) or workspace.resolve()
    return "p" + hashlib.sha256(os.fsencode(anchor)).hexdigest()[:16]


def status(knowledge: KnowledgeStore) -> LinkStatus:
    link = read_link(knowledge.swarm_dir)
    local = knowledge.swarm_dir / "knowledge.jsonl"
    files = knowledge.swarm.files
    return LinkStatus(
        linked=link is not None,
        link_id=None if link is None else str(link["linkId"]),
        store=files.knowledge,
        entries=len(knowledge.swarm.read().entries),
        orphaned_local_file=link is not None and local.is_file() and not local.is_symlink(),
    )


def _copy_missing(source: TierStore, target: TierStore, *, reset_outcomes: bool) -> int:
    entries = source.read().entries
    with target.transaction() as txn:
        present = {e.id for e in txn.entries}
        copied = 0
        for entry in entries:
            if entry.id in present:
                continue
            data = entry.to_dict()
            if reset_outcomes and "retrieval_outcomes" in data:
                data["retrieval_outcomes"] = v1_outcomes()
            txn.append(data)
            copied += 1
        return copied


def link(knowledge: KnowledgeStore, name: str | None = None, *, source: str = "manual") -> dict[str, Any]:
    """Link this worktree to ``<dataDir>/links/<name>/`` (default: the project hash)."""
    link_id = check_id(name, "link name") if name else default_link_id(knowledge.swarm_dir.parent)
    shared = TierStore(TierFiles.link(knowledge.data_dir, link_id), locks=knowledge.locks,
                       config=knowledge.config, project_name=knowledge.project_name,
                       clock=knowledge.clock)
    local = TierStore(TierFiles.swarm(knowledge.swarm_dir), locks=knowledge.locks,
                      config=knowledge.config, project_name=knowledge.project_name,
                      clock=knowledge.clock)
    copied = _copy_missing(local, shared, reset_outcomes=True)
    record = {"version": 1, "linkId": link_id, "createdAt": shared.now(), "source": source}
    write_json_atomic(knowledge.swarm_dir / LINK_FILE, record)
    return {**record, "copied": copied, "store": str(shared.files.knowledge)}


def unlink(knowledge: KnowledgeStore, *, copy_back: bool = True) -> dict[str, Any]:
    """Remove the link; by default copy shared lessons the local store lacks back first."""
    link_record = read_link(knowledge.swarm_dir)
    if link_record is None:
        return {"unlinked": False, "copied": 0}
    local = TierStore(TierFiles.swarm(knowledge.swarm_dir), locks=knowledge.locks,
                      config=knowledge.config, project_name=knowledge.project_name,
                      clock=knowledge.clock)
    copied = _copy_missing(knowledge.swarm, local, reset_outcomes=False) if copy_back else 0
    (knowledge.swarm_dir / LINK_FILE).unlink()
    return {"unlinked": True, "link_id": link_record["linkId"], "copied": copied}
