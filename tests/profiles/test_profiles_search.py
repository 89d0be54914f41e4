"""Profile memory files, paths and search ranking/budget/freshness."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from swarmq.profiles.episodes import append_episode
from swarmq.profiles.events import EventType, MissionEvent, append_events
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.search import MemorySearch, Scope, SearchError
from swarmq.profiles.summary import SummaryUpdate, update_summary
from swarmq.storage.atomic import write_atomic
from swarmq.storage.locking import LocalLocks
from swarmq.storage.paths import UnsafePathError, check_date


@pytest.fixture
def layout(tmp_path: Path) -> ProfileLayout:
    return ProfileLayout(tmp_path / "profiles", tmp_path / "shared", "w1")


def test_layout_refuses_bad_ids(layout: ProfileLayout, tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        ProfileLayout(tmp_path, tmp_path, "../x")
    with pytest.raises(UnsafePathError):
        layout.summary("a/b")
    with pytest.raises(UnsafePathError):
        check_date("2026-02-30")
    assert layout.shared_latest == tmp_path / "shared" / "handoffs" / "swarm" / "w1-latest.md"


def test_events_and_episodes_are_idempotent(layout: ProfileLayout, tmp_path: Path) -> None:
    locks = LocalLocks(tmp_path / "locks")
    event = MissionEvent(EventType.CHECKPOINT, "w1", "m1", "did it", "a1")
    assert append_events(layout, locks, "m1", [event, event]) == [event]
    assert append_events(layout, locks, "m1", [event]) == []
    assert append_episode(layout, locks, event) and not append_episode(layout, locks, event)
    text = layout.episode(event.at[:10]).read_text()
    assert text.startswith("# Episodes — w1 — ") and text.count("— checkpoint") == 1


def test_summary_keeps_human_notes(layout: ProfileLayout, tmp_path: Path) -> None:
    locks = LocalLocks(tmp_path / "locks")
    update_summary(
        layout, locks, "m1", SummaryUpdate(status="executing"), title="T", objective="Obj"
    )
    path = layout.summary("m1")
    path.write_text(path.read_text() + "\n## Notes from Eric\n\nkeep this\n")
    update_summary(
        layout,
        locks,
        "m1",
        SummaryUpdate(status="complete", checkpoints=["one", "one"], next_action="ship"),
    )
    text = path.read_text()
    assert "- Status: complete" in text and text.count("- one") == 1 and "keep this" in text
    assert "## Next action\n\nship" in text


def test_search_ranking_budget_and_freshness(tmp_path: Path) -> None:
    mem = tmp_path / "profiles" / "w1" / "memory"
    (mem / "episodes").mkdir(parents=True)
    (tmp_path / "shared" / "swarm").mkdir(parents=True)
    (mem / "a.md").write_text("the parser bug\nparser and the bug apart\n")
    (mem / "b.md").write_text("a parser note\n")
    (tmp_path / "shared" / "swarm" / "s.md").write_text("shared parser bug\n")
    old = time.time() - 1000
    os.utime(mem / "b.md", (old, old))
    search = MemorySearch(tmp_path / "profiles", tmp_path / "shared")
    hits = search.search("Parser  BUG", worker_id="w1").hits
    assert (hits[0].path.endswith("a.md"), hits[0].line, hits[0].phrase) == (True, 1, True)
    assert hits[1].overlap == 1.0 and not hits[1].phrase and hits[-1].path.endswith("b.md")
    assert "1: the parser bug" in hits[0].snippet
    assert [
        h.path.endswith("s.md") for h in search.search("parser bug", scope=Scope.SHARED).hits
    ] == [True]
    assert len(search.search("parser bug", scope=Scope.ALL).hits) == 4
    tight = search.search("parser", worker_id="w1", budget_chars=len(hits[0].path) + 60)
    assert tight.truncated and len(tight.hits) <= 1
    write_atomic(mem / "b.md", "now about quokkas\n")  # the writers' path journals the change
    assert search.search("quokkas", worker_id="w1").hits[0].path.endswith("b.md")
    (mem / "a.md").unlink()  # by hand: no journal line, seen at the next reconcile
    search.index.refresh()
    assert all(not h.path.endswith("a.md") for h in search.search("parser", worker_id="w1").hits)
    with pytest.raises(SearchError):
        search.search("x", scope=Scope.WORKER)
    with pytest.raises(SearchError):
        search.search("   ", worker_id="w1")
