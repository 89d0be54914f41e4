"""``swarmq mcp`` as a real process: over stdio driven by the SDK's stdio client (a lesson added
in one session is injected at the start of the next), and over streamable HTTP with and
without the bearer token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from swarmq.roster.loader import load_roster
from tests.mcp.support import data, error_text, free_port, stdio_params

LESSON = "Pin the celery worker prefetch multiplier to 1 so long tasks never starve short ones"


def test_stdio_add_in_one_session_is_injected_in_the_next(roster_file: Path) -> None:
    roster = load_roster(roster_file)

    async def main() -> str:
        async with Client(stdio_params(roster_file, worker="w1", session="a-1")) as first:
            names = {t.name for t in (await first.list_tools()).tools}
            assert {"knowledge_add", "knowledge_ack", "mission_submit"} <= names
            added = data(await first.call_tool("knowledge_add", {"lesson": LESSON}))
            assert added["outcome"] == "added"
            refused = await first.call_tool("knowledge_add", {"lesson": "short"})
            assert "validation layer 1: lesson too short" in error_text(refused)
        async with Client(stdio_params(roster_file, worker="w1", session="a-2")) as second:
            injected = data(
                await second.call_tool(
                    "knowledge_inject", {"task": "tune the celery worker for long tasks"}
                )
            )
            assert [e["id"] for e in injected["entries"]] == [added["id"]]
            acked = data(
                await second.call_tool(
                    "knowledge_ack",
                    {
                        "trace_id": injected["trace_id"],
                        "entry_id": added["id"],
                        "verdict": "applied",
                    },
                )
            )
            assert acked["status"] == "committed"
            assert acked["counters"]["applied_explicit_count"] == 1
        return str(added["id"])

    entry_id = anyio.run(main)
    lines = (roster.swarm_dir / "knowledge.jsonl").read_text().splitlines()
    [entry] = [json.loads(line) for line in lines if line.strip()]
    assert entry["id"] == entry_id
    assert entry["recorded_by"]["session_id"] == "a-1"
    assert entry["retrieval_outcomes"]["applied_explicit_count"] == 1


@pytest.fixture
def http_server(roster_file: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    port = free_port()
    token = "t0ken-for-the-test"
    env = {**os.environ, "SWARMQ_API_TOKEN": token}
    log = (tmp_path / "mcp-http.log").open("wb")
    argv = [sys.executable, "-m", "swarmq.cli", "-c", str(roster_file), "mcp", "--http"]
    proc = subprocess.Popen(
        [*argv, "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((tmp_path / "mcp-http.log").read_text()) from None
                time.sleep(0.2)
        yield url, token
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def test_http_needs_the_bearer_token(http_server: tuple[str, str]) -> None:
    url, token = http_server
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(url, json=ping, headers=headers).status_code == 401
    wrong = httpx.post(url, json=ping, headers={**headers, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"

    async def main() -> None:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with client, Client(streamable_http_client(url, http_client=client)) as mcp:
            names = {t.name for t in (await mcp.list_tools()).tools}
            assert "knowledge_search" in names
            added = data(await mcp.call_tool("knowledge_add", {"lesson": LESSON}))
            found = data(await mcp.call_tool("knowledge_search", {"query": "celery prefetch"}))
            assert found["results"][0]["id"] == added["id"]

    anyio.run(main)


def test_http_without_a_token_only_on_loopback(roster_file: Path) -> None:
    from typer.testing import CliRunner

    from swarmq.cli import app

    args = ["-c", str(roster_file), "mcp", "--http", "--host", "0.0.0.0", "--no-auth"]
    result = CliRunner().invoke(app, args, env={"SWARMQ_API_TOKEN": ""})
    assert result.exit_code == 1
    assert "--no-auth serves loopback addresses only, not 0.0.0.0" in result.output
