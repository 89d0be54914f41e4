"""A UTF-8 byte-order mark at the start of knowledge.jsonl: the first entry is served, nothing
goes to the corrupt sidecar, and a rewrite keeps the mark."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.storage.jsonl import BOM, read_jsonl, rewrite_jsonl


def test_jsonl_strips_the_bom_on_read_and_keeps_it_on_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(BOM + b'{"a":1}\n{"b":2}\n')
    read = read_jsonl(path)
    assert [line.value for line in read.lines] == [{"a": 1}, {"b": 2}] and read.corrupt == []
    rewrite_jsonl(path, [line.raw for line in read.lines] + ['{"c":3}'])
    assert path.read_bytes() == BOM + b'{"a":1}\n{"b":2}\n{"c":3}\n'


def test_the_first_entry_after_a_bom_is_served_and_the_bom_kept(
    make_knowledge: Callable[..., KnowledgeStore], tmp_path: Path
) -> None:
    store = make_knowledge().swarm
    first = store.add(NewLesson("Run the python test suite before pushing to main"), phase=1).entry
    second = store.add(NewLesson("Pin every dependency version in the lock file"), phase=1).entry
    assert first is not None and second is not None
    path = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    path.write_bytes(BOM + path.read_bytes())  # as a Windows editor saves it

    fresh = make_knowledge().swarm
    assert [e.id for e in fresh.read().entries] == [first.id, second.id]
    fresh.quarantine(second.id, "rewrite the file", "user")  # a whole-file rewrite
    assert path.read_bytes().startswith(BOM)
    assert [e.id for e in make_knowledge().swarm.read().entries] == [first.id]
    assert not (tmp_path / "project" / ".swarm" / "knowledge.corrupt.jsonl").exists()
