"""Index connections and store handles held from one search to the next (a resident process):
used again only once verified as a fresh open verifies them, so a held index never answers for
a file that changed, was truncated or replaced, nor through a sidecar renamed over since."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swarmq.knowledge import _heldindex
from swarmq.knowledge._ftsindex import FileIndex, sidecar_path
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import hold_indexes
from tests.knowledge.test_ftsindex import answers, lines, stores  # noqa: F401 (fixture)
from tests.knowledge.test_vecindex import HYBRID


@pytest.fixture(autouse=True)
def holding() -> Iterator[None]:
    hold_indexes()
    yield
    hold_indexes(False)


def _held(path: Path) -> _heldindex.Held:
    held = _heldindex._held.get(str(path))
    assert held is not None, "nothing held for the store"
    return held


def _ids(found: list[list[tuple[str, str, float]]], tier: str = "swarm") -> set[str]:
    return {i for result in found for i, t, _ in result if t == tier}


def _replace(path: Path, rows: list[str]) -> None:
    temp = path.with_suffix(".tmp")
    temp.write_text("\n".join(rows) + "\n")
    os.replace(temp, path)


@pytest.mark.parametrize("config", [{}, HYBRID])
def test_the_held_connection_serves_the_next_search_with_the_same_answers(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    config: dict[str, object],
) -> None:
    knowledge = stores(**config)
    swarm = knowledge.swarm.files.knowledge
    first = answers(knowledge)
    held = _held(swarm)
    again = answers(stores(**config))
    assert _held(swarm).db is held.db and _held(swarm).handle is held.handle
    hold_indexes(False)
    assert again == first == answers(stores(**config))
    assert sum(1 for found in first if found) >= 5


@pytest.mark.parametrize("change", ["replaced", "truncated in place", "appended to"])
def test_a_changed_file_is_caught_through_the_held_connection(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    change: str,
) -> None:
    """The held handle still reads the file it opened: a replaced file (swarmq's every write)
    is found by its identity, a truncated or grown one by the checks against the metadata."""
    knowledge = stores()
    swarm = knowledge.swarm.files.knowledge
    first = answers(knowledge)
    held = _held(swarm)
    rows = swarm.read_text().splitlines()
    if change == "replaced":
        kept = [row.replace("Supabase", "Postgres").replace("vitest", "jest") for row in rows[::2]]
        _replace(swarm, kept)
    elif change == "truncated in place":
        kept = rows[: len(rows) // 3]
        with swarm.open("r+b") as handle:
            handle.truncate(sum(len(row) + 1 for row in kept))
    else:
        kept = rows + lines(40, Tier.SWARM, 7)
        with swarm.open("a") as handle:
            handle.write("\n".join(kept[len(rows) :]) + "\n")
    found = answers(stores())
    ids = {json.loads(row)["id"] for row in kept}
    assert _ids(found) <= ids
    assert found != first
    if change == "replaced":
        assert _held(swarm).handle is not held.handle
        assert held.handle.closed
    hold_indexes(False)
    assert found == answers(stores(persistent_index=False))


def test_a_sidecar_renamed_over_the_held_one_is_read_instead(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    """Another process rebuilt the index: SQLite would read on from the file the held
    connection has open, so the connection is used only while the sidecar is that file."""
    knowledge = stores()
    swarm = knowledge.swarm.files.knowledge
    first = answers(knowledge)
    sidecar = sidecar_path(swarm)
    old = sidecar.with_name("old.sqlite")
    os.link(sidecar, old)
    held = _heldindex.take(str(swarm))
    assert held is not None
    hold_indexes(False)  # the rebuild is another process's: it holds nothing
    rebuilt = FileIndex.open(swarm, rebuild=True)
    assert rebuilt is not None
    rebuilt.close()
    assert os.stat(sidecar).st_ino != os.stat(old).st_ino
    hold_indexes()
    assert _heldindex.give(str(swarm), held)
    # the old sidecar, still open through the held connection, now says no entry is active
    ghost = sqlite3.connect(old)
    ghost.execute("UPDATE entries SET active = 0")
    ghost.commit()
    ghost.close()
    assert answers(stores()) == first
    now = _held(swarm)
    assert now.db is not held.db
    assert getattr(now.db, "identity", None) == (os.stat(sidecar).st_dev, os.stat(sidecar).st_ino)


def test_no_read_transaction_is_held_between_searches(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    """A writer of the index (another process's sync) is never kept waiting by a held one."""
    knowledge = stores(**HYBRID)
    answers(knowledge)
    swarm = knowledge.swarm.files.knowledge
    assert not _held(swarm).db.in_transaction
    writer = sqlite3.connect(sidecar_path(swarm), timeout=0)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("ROLLBACK")
    finally:
        writer.close()


def test_a_forked_child_opens_its_own_and_leaves_the_parents_open(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    knowledge = stores()
    swarm = knowledge.swarm.files.knowledge
    first = answers(knowledge)
    held = _held(swarm)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        status = 1
        try:
            nothing = _heldindex.take(str(swarm)) is None
            same = answers(stores()) == first
            mine = _heldindex._held[str(swarm)].db is not held.db
            os.write(writer, json.dumps([nothing, same, mine]).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    with os.fdopen(reader) as report:
        told = report.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and json.loads(told) == [True, True, True]
    assert answers(stores()) == first
    assert _held(swarm).db is held.db  # still open: the child closed nothing of the parent's
