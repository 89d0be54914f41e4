"""The listing pass reads a tier file exactly as the store does: same entries, same corrupt
lines with the same numbers and messages, whatever the file holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmq.memory.knowledge import KnowledgeStore
from swarmq.memory.knowledge.listing import read_listing
from tests.memory.knowledge import realistic

BOM = b"\xef\xbb\xbf"


def same_as_store(knowledge: KnowledgeStore) -> None:
    """Assert the listing of the swarm tier is the store's own snapshot."""
    snapshot = knowledge.swarm.read()
    listing = read_listing(knowledge.swarm.files.knowledge)
    assert [e.line() for e in listing.entries] == [e.line() for e in snapshot.entries]
    assert listing.corrupt == list(snapshot.corrupt)
    assert listing.scanned == len(snapshot.entries)


@pytest.mark.parametrize("tail", [b"\n", b"", b'\n{"id":"half","lesson":"trunc', b"\n   \n"])
def test_listing_matches_the_store_on_a_damaged_file(
    knowledge: KnowledgeStore, tail: bytes
) -> None:
    path = knowledge.swarm.files.knowledge
    path.parent.mkdir(parents=True)
    v1 = realistic.V1.encode()
    lines = [
        BOM + v1,
        b"",
        b"   ",
        b"{not json",
        b"[1,2]",
        b'{"id":"x"}',
        b"\xff\xfe bad",
        b'{"id":"n","lesson":"x","confidence":NaN}',
        BOM + realistic.CHINESE.encode(),
        v1,
    ]
    path.write_bytes(b"\n".join(lines) + tail)
    same_as_store(knowledge)
    assert [c.line_no for c in read_listing(path).corrupt][:5] == [4, 5, 6, 7, 8]


def test_listing_filters_and_keeps_file_order(knowledge: KnowledgeStore) -> None:
    for n in range(5):
        knowledge.add_lesson(
            f"Always pin dependency {n} in the lockfile before a release build {n}.", phase=1
        )
    first = knowledge.swarm.read().entries[0]
    knowledge.swarm.update(first.id, {"status": "archived"})
    same_as_store(knowledge)
    active = read_listing(knowledge.swarm.files.knowledge, lambda e: e.is_active)
    assert [e.id for e in active.entries] == [e.id for e in knowledge.swarm.read().active()]
    assert first.id not in {e.id for e in active.entries} and active.scanned == 5


def test_missing_file_is_an_empty_listing(tmp_path: Path) -> None:
    listing = read_listing(tmp_path / "nope.jsonl")
    assert listing.entries == [] and listing.corrupt == [] and listing.scanned == 0


def test_listing_sees_an_append_by_another_writer(knowledge: KnowledgeStore) -> None:
    knowledge.add_lesson("Run the migrations in a transaction so a failure leaves no half schema.")
    path = knowledge.swarm.files.knowledge
    other = json.loads(realistic.V1)
    with path.open("ab") as handle:
        handle.write(json.dumps(other).encode() + b"\n")
    assert [e.id for e in read_listing(path).entries][-1] == other["id"]
    same_as_store(knowledge)
