"""Roster digests: each process depends on exactly its own parts of swarm.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from swarmq.roster.loader import load_roster
from swarmq.workers import digest
from swarmq.workers.processes import beat_spec, flower_spec, worker_spec
from tests.support import write_roster


def specs(config: Path) -> dict[str, Any]:
    roster = load_roster(config, env={})
    out = {w.id: (roster, worker_spec(roster, w, config)) for w in roster.workers}
    out["beat"] = (roster, beat_spec(roster, config))
    out["flower"] = (roster, flower_spec(roster, config))
    return out


def changed_after(config: Path, edit: Any) -> dict[str, list[str] | None]:
    for roster, spec in specs(config).values():
        digest.record(roster, spec)
    data = yaml.safe_load(config.read_text())
    edit(data)
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return {name: digest.changes(roster, spec) for name, (roster, spec) in specs(config).items()}


def test_each_process_restarts_only_for_what_it_reads(tmp_path: Path) -> None:
    workers = [
        {"id": "a", "role": "r", "queues": ["missions"], "agent": {"command": ["x"]}},
        {"id": "b", "role": "r", "queues": ["forge"]},
    ]
    config = write_roster(tmp_path, "dig", "redis://127.0.0.1:6379/15", workers=workers)

    agent = changed_after(
        config, lambda d: d["workers"][0]["agent"].update(command=["y", "{prompt}"])
    )
    assert agent == {"a": ["worker.agent"], "b": [], "beat": [], "flower": []}

    flower = changed_after(config, lambda d: d.update(flower={"port": 5999}))
    assert flower["a"] == flower["b"] == flower["beat"] == []
    assert (
        flower["flower"] is not None
        and "command" in flower["flower"]
        and "roster.flower" in flower["flower"]
    )

    shared = changed_after(config, lambda d: d.update(missions={"heartbeat_seconds": 3}))
    assert all(shared[name] == ["roster.missions"] for name in ("a", "b", "beat", "flower"))

    queues = changed_after(config, lambda d: d["workers"][1].update(queues=["forge", "curator"]))
    assert queues["a"] == [] and queues["b"] is not None and "worker.queues" in queues["b"]

    roster, spec = specs(config)["a"]
    digest.forget(spec)
    assert digest.changes(roster, spec) is None  # nothing recorded: adopted, not restarted
