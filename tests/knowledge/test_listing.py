"""Listings read a tier file exactly as the store does (same entries, same corrupt lines with the
same numbers and messages), and their persisted index never outlives a change to the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmq.knowledge.listing import Filter, Listing, index_path, list_tier
from swarmq.knowledge.project import KnowledgeStore
from tests.knowledge import realistic

BOM = b"\xef\xbb\xbf"
ALL = Filter(include_inactive=True)


def same_as_store(knowledge: KnowledgeStore, index_dir: Path | None) -> Listing:
    """Assert a listing of the whole swarm tier is the store's own snapshot; return it."""
    snapshot = knowledge.swarm.read()
    listing = list_tier(knowledge.swarm.files.knowledge, ALL, index_dir=index_dir)
    assert [e.line() for e in listing.entries] == [e.line() for e in snapshot.entries]
    assert listing.corrupt == list(snapshot.corrupt)
    assert listing.scanned == len(snapshot.entries)
    return listing


def damaged(path: Path, tail: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
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


@pytest.mark.parametrize("tail", [b"\n", b"", b'\n{"id":"half","lesson":"trunc', b"\n   \n"])
def test_listing_matches_the_store_on_a_damaged_file(
    knowledge: KnowledgeStore, tmp_path: Path, tail: bytes
) -> None:
    damaged(knowledge.swarm.files.knowledge, tail)
    same_as_store(knowledge, None)
    first = same_as_store(knowledge, tmp_path / "index")
    again = same_as_store(knowledge, tmp_path / "index")  # from the index this time
    assert first.parsed >= 10 and again.parsed == (0 if tail.endswith(b"\n") else 1)
    assert [c.line_no for c in again.corrupt][:5] == [4, 5, 6, 7, 8]


def test_filters_and_slices_like_the_command(knowledge: KnowledgeStore, tmp_path: Path) -> None:
    for n in range(5):
        knowledge.add_lesson(f"Always pin dependency {n} in the lockfile before release build {n}.",
                             phase=1)  # fmt: skip
    entries = knowledge.swarm.read().entries
    knowledge.swarm.update(entries[0].id, {"status": "archived"})
    path = knowledge.swarm.files.knowledge
    for index_dir in (None, tmp_path / "index", tmp_path / "index"):
        active = list_tier(path, Filter(), index_dir=index_dir)
        assert [e.id for e in active.entries] == [e.id for e in knowledge.swarm.read().active()]
        archived = list_tier(path, Filter(status="archived"), index_dir=index_dir)
        assert [e.id for e in archived.entries] == [entries[0].id]
        for last in (2, 0, -1):
            shown = list_tier(path, ALL, last, index_dir=index_dir).entries
            assert [e.id for e in shown] == [e.id for e in knowledge.swarm.read().entries][-last:]


def test_missing_file_is_an_empty_listing(tmp_path: Path) -> None:
    listing = list_tier(tmp_path / "nope.jsonl", ALL, index_dir=tmp_path / "index")
    assert listing.entries == [] and listing.corrupt == [] and listing.scanned == 0


def test_an_append_is_parsed_alone(knowledge: KnowledgeStore, tmp_path: Path) -> None:
    knowledge.add_lesson("Run the migrations in a transaction so a failure leaves no half schema.")
    same_as_store(knowledge, tmp_path)
    other = json.loads(realistic.V1)
    with knowledge.swarm.files.knowledge.open("ab") as handle:  # another writer appends
        handle.write(json.dumps(other).encode() + b"\n")
    listing = same_as_store(knowledge, tmp_path)
    assert listing.parsed == 1 and listing.entries[-1].id == other["id"]


def test_any_change_inside_the_indexed_bytes_rebuilds(
    knowledge: KnowledgeStore, tmp_path: Path
) -> None:
    for n in range(3):
        knowledge.add_lesson(f"Never retry a payment capture {n} without its idempotency key {n}.")
    path = knowledge.swarm.files.knowledge
    same_as_store(knowledge, tmp_path)
    # an in-place edit of the same length (another tool archiving the first entry)
    text = path.read_bytes()
    status = b'"status":"candidate"'
    assert status in text
    path.write_bytes(text.replace(status, b'"status":"archived" ', 1))
    listing = same_as_store(knowledge, tmp_path)
    assert listing.parsed == 3
    assert len(list_tier(path, Filter(), index_dir=tmp_path).entries) == 2
    path.write_bytes(text.splitlines(keepends=True)[0])  # replaced by a shorter file
    assert same_as_store(knowledge, tmp_path).scanned == 1


def test_a_damaged_index_is_rebuilt(knowledge: KnowledgeStore, tmp_path: Path) -> None:
    knowledge.add_lesson("Pin the base image digest so rebuilds are reproducible across hosts.")
    path = knowledge.swarm.files.knowledge
    same_as_store(knowledge, tmp_path)
    cache = index_path(tmp_path, path)
    good = json.loads(cache.read_bytes())
    shifted = {**good, "entries": [[row[0] + 1, *row[1:]] for row in good["entries"]]}
    for junk in (b"{not json", b"[]", json.dumps({"version": 1}).encode(),
                 json.dumps(shifted).encode()):  # fmt: skip
        cache.write_bytes(junk)
        assert same_as_store(knowledge, tmp_path).parsed == 1
        assert json.loads(cache.read_bytes()) == good
