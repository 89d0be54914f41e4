"""Eight agents' ``swarmq mcp`` stdio servers against one workspace, adding (each its own
lessons and one lesson they all add) and acknowledging at once: every reported add is on disk
exactly once, every reported acknowledgement is a receipt and moved its entry's counters.
``python -m bench.mcp`` runs the same with 200 adds and 200 acks each."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from bench.mcp import run_agents, verify, write_roster
from swarmq.roster.loader import load_roster

AGENTS, ADDS, ACKS = 8, 10, 10


@pytest.mark.slow  # 15-25 s of real processes: handed out first
def test_eight_servers_lose_nothing_and_duplicate_nothing(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: object
) -> None:
    roster_file = write_roster(tmp_path, swarm_name, redis_url)
    reports = anyio.run(run_agents, roster_file, AGENTS, ADDS, ACKS)
    assert len(reports) == AGENTS
    assert verify(load_roster(roster_file), reports) == []
    assert sum(len(r.added) for r in reports) == AGENTS * ADDS + 1
    assert sum(r.outcomes["shared:added"] for r in reports) == 1
    assert sum(r.outcomes["shared:duplicate"] for r in reports) == AGENTS - 1
    assert all(len(r.acks) == ACKS for r in reports), [len(r.acks) for r in reports]
