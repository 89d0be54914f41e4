"""The link tier: worktrees (or similar projects) sharing one store in the data dir.

``link`` writes ``.swarm/link.json`` (``{version: 1, linkId, createdAt, source}``) and merges
this worktree's entries into the shared store, with outcome counters reset on new copies
(opencode-swarm's "outcome-history reset"); the local ``knowledge.jsonl`` is left where it is and
reported as orphaned. ``unlink`` merges the shared entries back first (unless
``copy_back=False``) and then removes the pointer. Receipts never follow a link.

Merging goes by id and ``revision``: a missing entry is copied, a newer revision replaces the
older one (compare-and-swap on the target's revision, under the target's lock), an identical
one is skipped, and two versions that both changed (the target's revision is not older, the
content differs) are a conflict: the target keeps its version and the other is appended to the
target's ``knowledge-link-conflicts.jsonl`` so neither change is lost.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.knowledge.counts import entry_count
from swarmq.knowledge.files import LINK_FILE, TierFiles
from swarmq.knowledge.model import Entry, v1_outcomes
from swarmq.knowledge.project import KnowledgeStore, read_link
from swarmq.knowledge.serialize import dumps_js
from swarmq.knowledge.store import TierStore
from swarmq.storage.atomic import append_lines, write_json_atomic
from swarmq.storage.paths import check_id


@dataclass(frozen=True, slots=True)
class LinkStatus:
    linked: bool
    link_id: str | None
    store: Path
    entries: int
    orphaned_local_file: bool
    """A regular local knowledge.jsonl beside link.json: ignored, the shared store wins."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "linked": self.linked,
            "link_id": self.link_id,
            "store": str(self.store),
            "entries": self.entries,
            "orphaned_local_file": self.orphaned_local_file,
        }


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
        entries=entry_count(knowledge.swarm),
        orphaned_local_file=link is not None and local.is_file() and not local.is_symlink(),
    )


CONFLICTS_FILE = "knowledge-link-conflicts.jsonl"
OUTCOME_KEYS = frozenset({"revision", "retrieval_outcomes"})


@dataclass
class MergeReport:
    """What a merge did, entry by entry (ids), so no change goes unreported."""

    copied: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    conflicted: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "copied": len(self.copied),
            "merged": len(self.merged),
            "conflicted": len(self.conflicted),
            "skipped": len(self.skipped),
            "copied_ids": self.copied,
            "merged_ids": self.merged,
            "conflicts": self.conflicted,
        }


def _content(entry: Entry) -> dict[str, Any]:
    return {k: v for k, v in entry.data.items() if k not in OUTCOME_KEYS}


def _merge(source: TierStore, target: TierStore, *, reset_outcomes: bool) -> MergeReport:
    """Bring ``source``'s entries into ``target`` by id and revision (rules in the module doc)."""
    report = MergeReport()
    entries = source.read().entries
    conflicts: list[str] = []
    with target.transaction() as txn:
        for entry in entries:
            current = txn.get(entry.id)
            if current is None:
                data = entry.to_dict()
                if reset_outcomes and "retrieval_outcomes" in data:
                    data["retrieval_outcomes"] = v1_outcomes()
                txn.append(data)
                report.copied.append(entry.id)
            elif entry.revision > current.revision:
                txn.put(entry.to_dict(), expected_revision=current.revision)
                report.merged.append(entry.id)
            elif _content(entry) == _content(current):
                report.skipped.append(entry.id)
            else:
                report.conflicted.append(
                    {
                        "id": entry.id,
                        "kept_revision": current.revision,
                        "other_revision": entry.revision,
                    }
                )
                conflicts.append(
                    dumps_js(
                        {
                            "id": entry.id,
                            "at": target.now(),
                            "from": str(source.files.knowledge),
                            "kept_revision": current.revision,
                            "entry": entry.to_dict(),
                        }
                    )
                )
        if conflicts:
            append_lines(target.files.root / CONFLICTS_FILE, conflicts, lease=txn.lease)
    return report


def link(
    knowledge: KnowledgeStore, name: str | None = None, *, source: str = "manual"
) -> dict[str, Any]:
    """Link this worktree to ``<dataDir>/links/<name>/`` (default: the project hash)."""
    link_id = check_id(name, "link name") if name else default_link_id(knowledge.swarm_dir.parent)
    shared = TierStore(
        TierFiles.link(knowledge.data_dir, link_id),
        locks=knowledge.locks,
        config=knowledge.config,
        project_name=knowledge.project_name,
        clock=knowledge.clock,
    )
    local = TierStore(
        TierFiles.swarm(knowledge.swarm_dir),
        locks=knowledge.locks,
        config=knowledge.config,
        project_name=knowledge.project_name,
        clock=knowledge.clock,
    )
    report = _merge(local, shared, reset_outcomes=True)
    record = {"version": 1, "linkId": link_id, "createdAt": shared.now(), "source": source}
    write_json_atomic(knowledge.swarm_dir / LINK_FILE, record)
    return {**record, **report.as_dict(), "store": str(shared.files.knowledge)}


def unlink(knowledge: KnowledgeStore, *, copy_back: bool = True) -> dict[str, Any]:
    """Remove the link; by default merge the shared lessons back into the local store first
    (new ones copied, newer revisions merged, diverged ones reported as conflicts)."""
    link_record = read_link(knowledge.swarm_dir)
    if link_record is None:
        return {"unlinked": False, **MergeReport().as_dict()}
    local = TierStore(
        TierFiles.swarm(knowledge.swarm_dir),
        locks=knowledge.locks,
        config=knowledge.config,
        project_name=knowledge.project_name,
        clock=knowledge.clock,
    )
    report = _merge(knowledge.swarm, local, reset_outcomes=False) if copy_back else MergeReport()
    (knowledge.swarm_dir / LINK_FILE).unlink()
    return {
        "unlinked": True,
        "link_id": link_record["linkId"],
        **report.as_dict(),
        "conflicts_file": str(knowledge.swarm_dir / CONFLICTS_FILE) if report.conflicted else None,
    }
