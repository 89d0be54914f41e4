"""The sign-bit prefilter of large vector views (``_vecindex``'s ``.sg`` file): with every row
kept as a candidate it answers as the exact scan does; it is caught up as rows are added,
rebuilt when missing, short or damaged, and a damaged file never brings back an entry gone from
the store."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from swarmq.knowledge import _vecindex
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from tests.knowledge.test_ftsindex import lines, stores  # noqa: F401 (fixture)
from tests.knowledge.test_vecindex import HYBRID, _replace, answers, through_index, whole


@pytest.fixture
def prefiltered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every view searched through its sign bits (the fixture's are far below PREFILTER_ROWS)."""
    monkeypatch.setattr(_vecindex, "PREFILTER_ROWS", 1)


def sign_file(knowledge: KnowledgeStore) -> Path:
    index = knowledge.swarm.files.knowledge.with_name("knowledge.index.sqlite")
    (path,) = index.parent.glob(f"{index.name}.*.sg")
    return path


def expected_signs(knowledge: KnowledgeStore) -> bytes:
    """The sign bits of the swarm's float16 file as it is now."""
    index = knowledge.swarm.files.knowledge.with_name("knowledge.index.sqlite")
    (vec,) = index.parent.glob(f"{index.name}.*.vec")
    half = np.fromfile(vec, dtype=np.float16)
    dim = knowledge.embedder.dim  # type: ignore[union-attr]
    return _vecindex.sign_bits(half.reshape(-1, dim)).tobytes()


def test_sign_bits_are_packed_signs_in_whole_words() -> None:
    rows = np.array([[1.0, -1.0, 0.0, 2.0] * 20], dtype=np.float32)
    bits = _vecindex.sign_bits(rows)
    assert bits.shape == (1, 16)  # 80 bits padded to two 64-bit words
    assert np.unpackbits(bits[0])[:80].tolist() == [1, 0, 0, 1] * 20
    assert not np.unpackbits(bits[0])[80:].any()


def test_hamming_distances_are_the_differing_signs(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    dim, count = 200, 70_000  # two blocks, a partial word
    rows = rng.standard_normal((count, dim)).astype(np.float16).astype(np.float32)
    path = tmp_path / "x.sg"
    path.write_bytes(_vecindex.sign_bits(rows).tobytes())
    query = rng.standard_normal(dim).astype(np.float32)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = _vecindex.hamming(fd, count, dim, query)
    finally:
        os.close(fd)
    assert got.tolist() == ((rows > 0) != (query > 0)).sum(axis=1).tolist()


def test_with_every_row_a_candidate_the_prefilter_answers_as_the_exact_scan(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    prefiltered: None,
) -> None:
    indexed = through_index(stores)
    assert indexed == whole(stores)
    assert sum(1 for found in indexed if found) >= 6
    assert len(expected_signs(stores(**HYBRID))) > 0


def test_a_narrow_prefilter_answers_only_with_live_entries(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    prefiltered: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Candidates fewer than the rows (recall below 1 is allowed), the file's entries only."""
    monkeypatch.setattr(_vecindex, "PREFILTER_MIN", 40)
    monkeypatch.setattr(_vecindex, "PREFILTER_PER_TAKE", 1)
    monkeypatch.setattr(_vecindex, "PREFILTER_SHARE", 1 << 30)
    through_index(stores)
    swarm = stores().swarm.files.knowledge
    kept = swarm.read_text().splitlines()[::2]
    _replace(swarm, kept)
    indexed = through_index(stores)
    ids = {json.loads(line)["id"] for line in kept}
    assert {i for found in indexed for i, tier, *_ in found if tier == "swarm"} <= ids


def test_the_sign_bits_follow_appended_rows(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    prefiltered: None,
) -> None:
    through_index(stores)
    before = sign_file(stores(**HYBRID)).stat().st_size
    swarm = stores().swarm.files.knowledge
    with swarm.open("a") as handle:
        handle.write("\n".join(lines(20, Tier.SWARM, 9)) + "\n")
    assert through_index(stores) == whole(stores)
    knowledge = stores(**HYBRID)
    assert sign_file(knowledge).stat().st_size > before
    assert sign_file(knowledge).read_bytes() == expected_signs(knowledge)


@pytest.mark.parametrize("damage", ["deleted", "truncated", "scribbled", "middle"])
def test_damaged_sign_bits_are_rebuilt_or_cost_only_recall(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    prefiltered: None,
    damage: str,
) -> None:
    first = through_index(stores)
    knowledge = stores(**HYBRID)
    path = sign_file(knowledge)
    good = path.read_bytes()
    if damage == "deleted":
        path.unlink()
    elif damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "scribbled":  # the last row: the tail check sees it
        path.write_bytes(good[:-8] + bytes(b ^ 0xFF for b in good[-8:]))
    else:  # inside the file, where no check looks: candidates change, answers stay the store's
        path.write_bytes(bytes(len(good) // 2) + good[len(good) // 2 :])
    found = through_index(stores)
    assert sign_file(stores(**HYBRID)).read_bytes() == (
        path.read_bytes() if damage == "middle" else good
    )
    if damage == "middle":
        ids = {
            json.loads(x)["id"] for x in knowledge.swarm.files.knowledge.read_text().splitlines()
        }
        hive = knowledge.hive.files.knowledge.read_text()
        for result in found:
            for entry_id, tier, *_ in result:
                assert entry_id in ids if tier == "swarm" else entry_id in hive
    else:
        assert found == first


def test_an_index_without_sign_bits_gets_them_without_a_rebuild(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    """An index written before the prefilter (no ``vec_g*`` keys, no ``.sg`` file): the next
    reader derives the bits from the float16 rows, which it keeps."""
    import sqlite3

    first = through_index(stores)
    knowledge = stores(**HYBRID)
    index = knowledge.swarm.files.knowledge.with_name("knowledge.index.sqlite")
    (vec,) = index.parent.glob(f"{index.name}.*.vec")
    vec_inode = vec.stat().st_ino
    sign_file(knowledge).unlink()
    db = sqlite3.connect(index, isolation_level=None)
    db.execute("DELETE FROM meta WHERE key LIKE 'vec_g%' AND key != 'vec_gen'")
    db.close()
    assert answers(stores(**HYBRID)) == first
    assert vec.stat().st_ino == vec_inode, "the vectors were rebuilt"
    assert sign_file(knowledge).read_bytes() == expected_signs(knowledge)


def test_a_rebuild_leaves_an_open_sign_file_whole(tmp_path: Path) -> None:
    """Bits made afresh go to a new file renamed over the old one: a reader of an older
    version keeps reading the bytes it checked (a truncated mapped file would fault)."""
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((300, 64)).astype(np.float16).astype(np.float32)
    index = tmp_path / "knowledge.index.sqlite"
    _vecindex._write_rows(index, "n", 0, rows)
    _vecindex._catch_up_signs(index, {}, "n", 300, 64)
    path = _vecindex.signs_path(index, "n")
    old = path.read_bytes()
    fd = os.open(path, os.O_RDONLY)
    try:
        _vecindex._write_rows(index, "n", 0, -rows[:10])  # rows changed: the bits differ
        _vecindex._catch_up_signs(index, {}, "n", 300, 64)
        assert os.pread(fd, len(old) + 1, 0) == old
    finally:
        os.close(fd)
    assert path.read_bytes() != old
    assert (
        path.read_bytes() == _vecindex.sign_bits(np.concatenate([-rows[:10], rows[10:]])).tobytes()
    )
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == []
