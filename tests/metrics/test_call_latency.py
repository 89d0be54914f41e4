"""Hook and MCP call latencies: a real hook server and a real ``swarmq mcp`` answer calls, and a
scrape of the exporter (another process's reader) shows their counts; the files of servers that
are gone are folded once, never counted twice."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from swarmq.hooks._wire import request
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.storage import call_latency
from swarmq.storage.call_latency import BUCKETS, DIRECTORY, Histogram, read_all, retire_gone
from swarmq.storage.statedir import swarm_state_dir
from swarmq.wiring.figures import FigureReader
from swarmq.wiring.metrics import exposition, figure_registry
from tests.hooks.support import wait_until
from tests.mcp.support import data, stdio_params


def counts(roster: Roster) -> dict[tuple[str, str], float]:
    """``(metric, call) -> count`` of the two call histograms in one scrape."""
    body = exposition(figure_registry(FigureReader(roster))).decode()
    out = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            if sample.name in (
                "swarmq_hook_call_duration_seconds_count",
                "swarmq_mcp_call_duration_seconds_count",
            ):
                call = sample.labels.get("event") or sample.labels["tool"]
                out[(sample.name, call)] = sample.value
    return out


def test_hook_and_mcp_calls_show_in_a_scrape(roster_file: Path, tmp_path: Path) -> None:
    roster = load_roster(roster_file)
    state_root = tmp_path / "state"
    os.environ["SWARMQ_STATE"] = str(state_root)
    try:
        state = swarm_state_dir(roster_file)
    finally:
        del os.environ["SWARMQ_STATE"]
    env = {**os.environ, "SWARMQ_STATE": str(state_root)}
    hook = subprocess.Popen(
        [sys.executable, "-m", "swarmq.hooks.server", "--config", str(roster_file), "--idle", "60"],
        env=env,
    )
    try:
        assert wait_until(lambda: request(state, {"op": "ping"}, 1.0) is not None, 60, 0.1)
        answer = request(state, {"op": "prompt", "text": "tune celery", "session_id": "s1"}, 10.0)
        assert answer is not None and "error" not in answer, answer

        async def main() -> None:
            async with Client(stdio_params(roster_file, worker="w1", session="a-1")) as client:
                for _ in range(2):
                    data(await client.call_tool("knowledge_search", {"query": "celery"}))

        anyio.run(main)  # the MCP server writes its counts when it leaves

        def shown() -> bool:
            got = counts(roster)
            return (
                got.get(("swarmq_hook_call_duration_seconds_count", "prompt")) == 1
                and got.get(("swarmq_hook_call_duration_seconds_count", "ping"), 0) >= 1
                and got.get(("swarmq_mcp_call_duration_seconds_count", "knowledge_search")) == 2
            )

        assert wait_until(shown, 15, 0.2), counts(roster)
    finally:
        hook.terminate()
        hook.wait(30)
    # the hook server was killed: its last flush stays on disk and a new recorder folds it
    before = read_all(roster.runtime_dir, "hook")
    assert retire_gone(roster.runtime_dir, "hook") == 1
    assert read_all(roster.runtime_dir, "hook") == before


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_a_fold_interrupted_before_removal_counts_nothing_twice(tmp_path: Path) -> None:
    directory = tmp_path / DIRECTORY
    directory.mkdir()
    one = Histogram()
    one.observe(0.003)
    one.observe(7.0)
    calls = {"prompt": {"counts": one.counts, "sum": one.total}}
    doc = {"host": socket.gethostname(), "buckets": list(BUCKETS), "calls": calls}
    gone = directory / f"hook-{dead_pid()}-1.json"
    gone.write_text(json.dumps(doc))
    assert read_all(tmp_path, "hook")["prompt"] == one
    assert retire_gone(tmp_path, "hook") == 1
    assert not gone.exists()
    assert read_all(tmp_path, "hook")["prompt"] == one
    # a crash after the retired file was written, before the process file was removed
    gone.write_text(json.dumps(doc))
    assert read_all(tmp_path, "hook")["prompt"] == one
    assert retire_gone(tmp_path, "hook") == 1
    assert read_all(tmp_path, "hook")["prompt"] == one
    assert call_latency.read_all(tmp_path, "mcp") == {}
    # a process of another host sharing the runtime directory: its pid means nothing here
    elsewhere = directory / f"hook-{dead_pid()}-2.json"
    elsewhere.write_text(json.dumps({**doc, "host": "another-host"}))
    assert retire_gone(tmp_path, "hook") == 0 and elsewhere.exists()
    assert sum(read_all(tmp_path, "hook")["prompt"].counts) == 4


def test_a_recorder_keeps_labels_to_its_closed_set(tmp_path: Path) -> None:
    recorder = call_latency.LatencyRecorder(tmp_path, "hook", ("prompt",), flush_seconds=0.01)
    recorder.observe("prompt", 0.002)
    recorder.observe("made-up", 0.002)
    recorder.close()
    got = read_all(tmp_path, "hook")
    assert {k: sum(h.counts) for k, h in got.items()} == {"prompt": 1, "other": 1}
