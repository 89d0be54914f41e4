"""The persistent memory search index: kept current by journals, rebuilt when lost, never stale."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swarmq.profiles import _search_index as search_index
from swarmq.profiles.search import MemorySearch, Scope
from swarmq.storage.atomic import append_lines, write_atomic
from swarmq.storage.change_journal import journal_path

REPO = Path(__file__).resolve().parents[2]


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    profiles, shared = tmp_path / "profiles", tmp_path / "shared"
    mem = profiles / "w1" / "memory"
    (mem / "episodes").mkdir(parents=True)
    shared.mkdir()
    (mem / "MEMORY.md").write_text("# Memory\n\nthe flaky parser needs a fixed seed\n")
    (shared / "notes.md").write_text("shared: redis restarts lose the quota keys\n")
    return profiles, shared, mem


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_a_new_process_answers_from_the_stored_index(tmp_path: Path) -> None:
    profiles, shared, _ = _tree(tmp_path)
    MemorySearch(profiles, shared).search("anything", scope=Scope.ALL)  # builds the index
    db = profiles / ".swarmq" / "search" / "index.sqlite"
    assert db.is_file()
    out = _run(
        f"""
        from pathlib import Path
        from swarmq.profiles.search import MemorySearch, Scope
        s = MemorySearch(Path({str(profiles)!r}), Path({str(shared)!r}))
        print("reread", s.index.sync())
        for h in s.search("flaky parser", scope=Scope.ALL, refresh=False).hits:
            print(h.path, h.line, h.phrase)
        """
    )
    assert "reread 0" in out  # nothing re-read: the stored index was current
    assert f"{profiles / 'w1' / 'memory' / 'MEMORY.md'} 3 True" in out


def test_writes_from_another_process_show_in_the_next_query(tmp_path: Path) -> None:
    profiles, shared, mem = _tree(tmp_path)
    search = MemorySearch(profiles, shared)
    assert not search.search("quokka", scope=Scope.ALL).hits
    _run(
        f"""
        from swarmq.storage.atomic import append_lines, write_atomic
        write_atomic({str(mem / "handoff.md")!r}, "next: feed the quokka\\n")
        append_lines({str(mem / "episodes" / "e.jsonl")!r}, ['{{"note": "quokka seen"}}'])
        write_atomic({str(shared / "swarm" / "s.md")!r}, "shared quokka rule\\n")
        """
    )
    assert search.index.sync() == 3  # exactly the three journaled files were re-read
    found = {Path(h.path).name for h in search.search("quokka", scope=Scope.ALL).hits}
    assert found == {"handoff.md", "e.jsonl", "s.md"}


def test_hand_edits_show_after_a_reconcile(tmp_path: Path) -> None:
    profiles, shared, mem = _tree(tmp_path)
    lazy = MemorySearch(profiles, shared)
    lazy.search("x", scope=Scope.ALL)
    (mem / "MEMORY.md").write_text("rewritten by hand: wombat\n")  # no journal line
    lazy.index.refresh()
    assert lazy.search("wombat", scope=Scope.ALL).hits
    eager = MemorySearch(profiles, shared)
    eager.index.reconcile_seconds = 0.0  # every query reconciles, as the interval elapses
    (mem / "new.md").write_text("numbat\n")
    assert eager.search("numbat", scope=Scope.ALL).hits


def test_lost_or_foreign_index_is_rebuilt(tmp_path: Path) -> None:
    profiles, shared, _ = _tree(tmp_path)
    MemorySearch(profiles, shared).search("x", scope=Scope.ALL)
    db = profiles / ".swarmq" / "search" / "index.sqlite"
    db.unlink()
    assert MemorySearch(profiles, shared).search("flaky", scope=Scope.ALL).hits
    other = tmp_path / "other-shared"
    other.mkdir()
    moved = MemorySearch(profiles, other)  # other roots: the stored index is reset
    assert not moved.search("redis", scope=Scope.SHARED).hits
    assert moved.search("flaky", scope=Scope.ALL).hits


def test_journal_is_compacted_and_nothing_is_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "JOURNAL_COMPACT_BYTES", 64)
    profiles, shared, mem = _tree(tmp_path)
    search = MemorySearch(profiles, shared)
    search.search("x", scope=Scope.ALL)
    for n in range(20):
        write_atomic(mem / f"n{n}.md", f"note {n} about capybara\n")
    assert len(search.search("capybara", scope=Scope.ALL, limit=50).hits) == 20
    assert os.stat(journal_path(profiles)).st_size == 0  # consumed, then truncated
    append_lines(mem / "episodes" / "late.jsonl", ['{"n": "capybara late"}'])
    assert len(search.search("capybara", scope=Scope.ALL, limit=50).hits) == 21


def test_missing_profiles_root_searches_in_memory_and_creates_nothing(tmp_path: Path) -> None:
    _, shared, _ = _tree(tmp_path)
    profiles = tmp_path / "not-yet"
    search = MemorySearch(profiles, shared)
    assert search.index.db_path is None
    assert search.search("quota keys", scope=Scope.ALL).hits
    assert not profiles.exists()


def test_phrase_is_the_text_as_written(tmp_path: Path) -> None:
    profiles, shared, mem = _tree(tmp_path)
    (mem / "a.md").write_text("set sql.init.mode to always\n")
    (mem / "b.md").write_text("sql init mode is unrelated\n")
    hits = MemorySearch(profiles, shared).search("sql.init.mode", scope=Scope.ALL).hits
    assert [(Path(h.path).name, h.phrase) for h in hits] == [("a.md", True), ("b.md", False)]
