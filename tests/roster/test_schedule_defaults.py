"""The beat's default entries: ``maturity.embed`` is scheduled when hybrid retrieval's model
leaves entry vectors to the background (MiniLM, an endpoint), and only then; the roster's own
entry of the task, ``knowledge.embed_every_seconds: 0`` or a swarm with no ``maturity``
consumer leaves it out."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from swarmq.knowledge.config import DenseModel, KnowledgeConfig
from swarmq.names import MATURITY_EMBED
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.workers.config import build_beat_schedule
from tests.support import write_roster

KEEPER = [
    {"id": "b1", "role": "builder", "queues": ["missions"]},
    {"id": "k1", "role": "keeper", "queues": ["maturity", "consolidation"]},
]


def roster(tmp_path: Path, workers: list[dict[str, Any]] = KEEPER, **extra: Any) -> Roster:
    path = write_roster(tmp_path, "sched", "redis://127.0.0.1:6379/10", workers=workers, **extra)
    return load_roster(path, env={})


def test_auto_resolves_to_minilm_where_its_packages_are_installed() -> None:
    # the dev install carries the minilm extra, as the README's install command does
    assert KnowledgeConfig().model is DenseModel.MINILM


def test_the_default_roster_puts_the_vector_fill_on_the_beat(tmp_path: Path) -> None:
    beat = build_beat_schedule(roster(tmp_path))
    entry = beat[MATURITY_EMBED]
    assert entry["task"] == MATURITY_EMBED
    assert entry["schedule"].run_every == timedelta(minutes=5)
    assert entry["options"]["queue"] == "maturity"


def test_models_that_embed_inline_and_lexical_retrieval_schedule_nothing(tmp_path: Path) -> None:
    for knowledge in (
        {"dense_model": "wordllama"},
        {"retrieval": "lexical"},
        {"enabled": False},
        {"embed_every_seconds": 0},
    ):
        assert MATURITY_EMBED not in build_beat_schedule(roster(tmp_path, knowledge=knowledge))


def test_an_endpoint_model_gets_the_fill_whatever_the_packaged_model(tmp_path: Path) -> None:
    llm = {
        "provider": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "embedding_model": "e",
    }
    beat = build_beat_schedule(roster(tmp_path, llm=llm, knowledge={"dense_model": "wordllama"}))
    assert MATURITY_EMBED in beat


def test_the_rosters_own_entry_of_the_task_replaces_the_default(tmp_path: Path) -> None:
    beat = build_beat_schedule(
        roster(tmp_path, schedule={"fill-vectors": {"task": MATURITY_EMBED, "every": "2m"}})
    )
    assert [name for name, e in beat.items() if e["task"] == MATURITY_EMBED] == ["fill-vectors"]
    assert beat["fill-vectors"]["schedule"].run_every == timedelta(minutes=2)


def test_an_interval_set_in_knowledge_is_the_cadence(tmp_path: Path) -> None:
    beat = build_beat_schedule(roster(tmp_path, knowledge={"embed_every_seconds": 120}))
    assert beat[MATURITY_EMBED]["schedule"].run_every == timedelta(minutes=2)


def test_no_default_entry_when_no_worker_consumes_its_queue(tmp_path: Path) -> None:
    only_builders = [{"id": "b1", "role": "builder", "queues": ["missions"]}]
    assert MATURITY_EMBED not in build_beat_schedule(roster(tmp_path, workers=only_builders))


def test_roster_show_lists_the_default_entry_marked(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from swarmq.cli import app

    path = write_roster(
        tmp_path,
        "sched",
        "redis://127.0.0.1:6379/10",
        workers=KEEPER,
        schedule={"maturity.sweep": "1h"},
    )
    done = CliRunner().invoke(app, ["--config", str(path), "roster", "show"])
    assert done.exit_code == 0, done.output
    row = next(line for line in done.output.splitlines() if "schedule" in line)
    assert "maturity.embed→maturity.embed (default)" in row and "maturity.sweep→" in row, row
