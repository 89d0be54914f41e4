"""Quarantine → restore of every entry of every real store in eval/knowledge/stores/ succeeds
and leaves the store file byte-identical (the entries opencode-swarm itself wrote)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from swarmq.knowledge._loaded import LoadedFile
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks

STORES = sorted(
    (Path(__file__).resolve().parents[2] / "eval" / "knowledge" / "stores").glob("*.jsonl")
)


@pytest.mark.parametrize("source", STORES, ids=lambda p: p.stem)
def test_every_real_entry_comes_back_in_place(source: Path, tmp_path: Path) -> None:
    swarm = tmp_path / "p" / ".swarm"
    swarm.mkdir(parents=True)
    shutil.copyfile(source, swarm / "knowledge.jsonl")
    knowledge = KnowledgeStore(
        swarm, locks=LocalLocks(tmp_path / "locks"), data_dir=tmp_path / "data", project_name="p"
    )
    before = (swarm / "knowledge.jsonl").read_bytes()
    ids = [e.id for e in knowledge.swarm.read().entries]
    assert ids
    for entry_id in ids:
        knowledge.swarm.quarantine(entry_id, "eval", "user")
        knowledge.swarm.restore(entry_id)
        assert (swarm / "knowledge.jsonl").read_bytes() == before, entry_id


def test_a_mirror_follows_a_line_inserted_mid_file(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.jsonl"
    lines = [STORES[0].read_text("utf-8").splitlines()[i] for i in range(4)]
    path.write_text("\n".join(lines[:1] + lines[2:]) + "\n", "utf-8")
    mirror = LoadedFile(path)
    mirror.refresh()
    replacement = tmp_path / "next.jsonl"
    replacement.write_text("\n".join(lines) + "\n", "utf-8")
    replacement.replace(path)  # a new inode, as an atomic rewrite leaves it
    mirror.refresh()
    assert [e.raw for e in mirror.entries()] == lines
    assert list(mirror.slots) == [0, 3, 1, 2]  # kept incrementally: no full re-parse
