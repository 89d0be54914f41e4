"""Ledger cost against missions ever submitted: submit, heartbeat, settle and list.

    python bench/missions_ledger.py [--history 100000] [--submits 100]
        (Redis store locks: $SWARMQ_BENCH_REDIS_URL, default redis://127.0.0.1:6379/14)

A submit here is exactly the ledger part of ``MissionClient.submit``: the Redis store lock, read
the ledger, route, create, write it back (the Celery send after it does not depend on history).
First in an empty swarm (the first hundred), then after a synthetic history of ``--history``
finished missions written in the retired layout (archive ``mission.json``, index line, client-key
file) with the ledger holding its retention tail of ``ledger_keep_finished`` finished missions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import BENCH_REDIS_URL, save, scratch_swarm, table  # noqa: E402
from swarmq.client import MissionClient  # noqa: E402
from swarmq.coord.cluster import Cluster  # noqa: E402
from swarmq.missions.dispatch import MissionSpec, cancel_mission, create_mission  # noqa: E402
from swarmq.missions.history import index_entry, write_beat  # noqa: E402
from swarmq.missions.ledger import Ledger, new_id  # noqa: E402
from swarmq.missions.routing import Target, route  # noqa: E402
from swarmq.roster.loader import load_roster  # noqa: E402
from swarmq.roster.schema import Roster  # noqa: E402
from swarmq.storage.clock import iso  # noqa: E402
from swarmq.wiring.ledger import mission_ledger  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed_submits(
    ledger: Ledger, roster: Roster, count: int, tag: str
) -> tuple[list[float], list[str]]:
    times, ids = [], []
    for n in range(count):
        started = time.perf_counter()
        with ledger.edit() as doc:
            decision = route(roster.workers, Target("b1"), live=None, load=doc.load())
            spec = MissionSpec(
                f"{tag} mission {n}: do the thing", target=Target("b1"), client_key=f"{tag}-{n}"
            )
            ids.append(create_mission(doc, spec, decision).id)
        times.append((time.perf_counter() - started) * 1000)
    return times, ids


def timed_beats(roster: Roster, ids: list[str]) -> list[float]:
    times = []
    for n, assignment_id in enumerate(ids):
        started = time.perf_counter()
        write_beat(
            roster.runtime_dir,
            assignment_id,
            {"token": "t", "host": "h", "pid": n, "heartbeatAt": iso()},
        )
        times.append((time.perf_counter() - started) * 1000)
    return times


def synthesize_history(ledger: Ledger, roster: Roster, count: int) -> None:
    """``count`` finished missions as retirement leaves them, without fsync (setup, not measured)."""
    lines = []
    archive_root, keys_dir = ledger.history.archive_root, ledger.history.key_path("x").parent
    keys_dir.mkdir(parents=True, exist_ok=True)
    log = [
        {"at": iso(), "type": "submit", "summary": "submitted for worker b1", "state": "planning"},
        {"at": iso(), "type": "settle", "summary": "agent finished (exit 0)", "state": "complete"},
    ]
    for n in range(count):
        mission_id = new_id("mission")
        record: dict[str, Any] = {
            "id": mission_id,
            "title": f"old mission {n}",
            "objective": f"old objective {n} " * 8,
            "state": "complete",
            "createdAt": iso(),
            "updatedAt": iso(),
            "clientKey": f"old-{n}",
            "target": {"workerId": "b1"},
            "currentAssignmentId": f"assign-{n:012x}",
            "assignments": [
                {
                    "id": f"assign-{n:012x}",
                    "workerId": "b1",
                    "state": "complete",
                    "attempts": 1,
                    "queue": "worker.b1",
                    "createdAt": iso(),
                }
            ],
            "log": log,
        }
        path = archive_root / mission_id / "mission.json"  # what MissionHistory.archive_file names
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({**record, "retired": True}))
        key = ledger.history.key_path(f"old-{n}")
        key.write_text(json.dumps({"clientKey": f"old-{n}", "missionId": mission_id}))
        lines.append(json.dumps(index_entry(record, path)))
        if n and n % 10_000 == 0:
            print(f"history: {n:,} missions", flush=True)
    ledger.history.index_path.write_text("\n".join(lines) + "\n")
    # The retention tail: the ledger file keeps this many finished missions.
    _, tail = timed_submits(ledger, roster, roster.missions.ledger_keep_finished, "tail")
    with ledger.edit() as doc:
        for mission_id in tail:
            cancel_mission(doc, mission_id, "history")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--history", type=int, default=100_000)
    parser.add_argument("--submits", type=int, default=100)
    args = parser.parse_args()
    rows: list[list[Any]] = []
    result: dict[str, Any] = {"history": args.history, "submits": args.submits}
    with scratch_swarm() as swarm, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = root / "swarm.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "swarm": swarm,
                    "workspace": str(root),
                    "redis_url": BENCH_REDIS_URL,
                    "paths": {k: str(root / k) for k in ("profiles", "runtime", "shared", "hive")},
                    "workers": [
                        {
                            "id": "b1",
                            "role": "builder",
                            "queues": ["missions"],
                            "agent": {"command": ["true"]},
                        }
                    ],
                }
            )
        )
        roster = load_roster(config, env={})
        cluster = Cluster.connect(roster.cluster_config())
        ledger = mission_ledger(roster, cluster.locks)
        first, first_ids = timed_submits(ledger, roster, args.submits, "first")
        beats_first = timed_beats(
            roster, [ledger.read().get(m).current_assignment_id or "" for m in first_ids]
        )
        with ledger.edit() as doc:  # finish them, as their runs would
            for mission_id in first_ids:
                cancel_mission(doc, mission_id, "done")
        started = time.perf_counter()
        synthesize_history(ledger, roster, args.history)
        result["synthesis_seconds"] = time.perf_counter() - started
        late, late_ids = timed_submits(ledger, roster, args.submits, "late")
        beats_late = timed_beats(
            roster, [ledger.read().get(m).current_assignment_id or "" for m in late_ids]
        )
        started = time.perf_counter()
        with ledger.edit() as doc:
            for mission_id in late_ids:
                cancel_mission(doc, mission_id, "done")
        result["settle_100_ms"] = (time.perf_counter() - started) * 1000
        client = MissionClient(roster, locks=cluster.locks)
        started = time.perf_counter()
        listed = client.list(limit=50)
        result["list_limit50_ms"] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        old = client.get(listed[-1].id)
        result["get_retired_ms"] = (time.perf_counter() - started) * 1000
        assert old.id == listed[-1].id
        result["ledger_bytes"] = ledger.path.stat().st_size
        cluster.close()
    for name, values in (
        ("submit, first 100", first),
        (f"submit, {args.history:,} ever submitted", late),
        ("heartbeat, first 100", beats_first),
        (f"heartbeat, {args.history:,}", beats_late),
    ):
        result[name] = {"p50_ms": statistics.median(values), "p95_ms": pct(values, 0.95)}
        rows.append([name, statistics.median(values), pct(values, 0.95)])
    result["submit_ratio"] = statistics.median(late) / statistics.median(first)
    table("mission ledger (ms)", ["what", "p50", "p95"], rows)
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, dict)}, indent=2))
    save("missions_ledger", result)


if __name__ == "__main__":
    main()
