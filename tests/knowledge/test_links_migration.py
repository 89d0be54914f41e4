"""Link / unlink with copy-back, status, and the context.md migration."""

from __future__ import annotations

import json
from collections.abc import Callable

from swarmq.knowledge.links import default_link_id, link, status, unlink
from swarmq.knowledge.migration import migrate
from swarmq.knowledge.project import KnowledgeStore


def test_link_redirects_the_swarm_tier_and_unlink_copies_back(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    local = make_knowledge()
    entry = local.add_lesson("Run the python test suite before pushing to main").entry
    assert entry is not None
    info = link(local, "team")
    assert info["linkId"] == "team" and info["copied"] == 1
    record = json.loads((local.swarm_dir / "link.json").read_text())
    assert list(record) == ["version", "linkId", "createdAt", "source"]
    linked = make_knowledge()
    assert linked.swarm.files.root == local.data_dir / "links" / "team"
    assert linked.receipts_path == local.swarm_dir / "knowledge-receipts-v2.jsonl"
    copied = linked.swarm.get(entry.id)
    assert copied is not None and copied.outcomes["shown_count"] == 0
    state = status(linked)
    assert state.linked and state.orphaned_local_file
    shared_only = linked.add_lesson("Prefer uv over pip for python installs in CI").entry
    assert shared_only is not None
    assert unlink(linked)["copied"] == 1
    back = make_knowledge()
    assert not status(back).linked
    assert back.swarm.get(shared_only.id) is not None


def test_default_link_id_is_shared_by_worktrees(tmp_path) -> None:  # type: ignore[no-untyped-def]
    main = tmp_path / "repo"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert default_link_id(main) == default_link_id(worktree)
    assert default_link_id(main) != default_link_id(tmp_path / "elsewhere")


def test_migration_is_idempotent(knowledge: KnowledgeStore) -> None:
    knowledge.swarm_dir.mkdir(parents=True, exist_ok=True)
    (knowledge.swarm_dir / "context.md").write_text(
        "# Context\n\n## Lessons Learned\n- Always run vitest with --run in the CI pipeline\n"
        "- Always run vitest with --run in the CI pipeline!\n- short\n\n## Decisions\n"
        "* Use a layered module architecture for the api server\n\n## Other\n- ignored bullet here ok\n",
        encoding="utf-8",
    )
    first = migrate(knowledge)
    assert (first["imported"], first["duplicates"], first["rejected"]) == (2, 1, 1)
    categories = sorted(e.category for e in knowledge.swarm.read().entries)
    assert categories == ["architecture", "testing"]
    assert migrate(knowledge)["skipped"] is True
    assert len(knowledge.swarm.read().entries) == 2
