"""An injection that finds nothing says how many entries the store holds without loading it:
the count comes from the persisted index (``swarmq.knowledge.counts``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.knowledge._loaded import LoadedFile, forget
from swarmq.knowledge.model import Tier
from tests.knowledge.test_ftsindex import lines
from tests.support import write_roster

ENTRIES = 3000


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    roster = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        knowledge={"retrieval": "lexical", "swarm_max_entries": None},
    )
    store = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("\n".join(lines(ENTRIES, Tier.SWARM, 7)) + "\n", encoding="utf-8")
    return roster


def test_an_empty_injection_counts_the_store_from_its_index(
    roster_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    unarchived = sum(1 for line in store.read_text().splitlines() if '"archived"' not in line)
    assert 0 < unarchived < ENTRIES  # the fixture archives some: the count must leave them out
    # the index is built once, as the first search of any process builds it
    first = CliRunner().invoke(app, ["-c", str(roster_file), "knowledge", "search", "celery"])
    assert first.exit_code == 0, first.output
    forget(store)
    loads: list[Path] = []
    load = LoadedFile.refresh

    def counted(mirror: LoadedFile) -> None:
        if mirror.state is None and mirror.path == store:  # a first load parses it all
            loads.append(mirror.path)
        load(mirror)

    monkeypatch.setattr(LoadedFile, "refresh", counted)
    said = CliRunner().invoke(
        app, ["-c", str(roster_file), "knowledge", "inject", "bake a sourdough loaf", "--preview"]
    )
    assert said.exit_code == 0, said.output
    plain = " ".join(said.output.split())
    assert f"no entry of the {unarchived} in the store is relevant" in plain
    assert loads == [], "the empty injection loaded the store"
    assert "<swarm_knowledge_directives>" not in said.output
