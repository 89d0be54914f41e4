"""The MCP server through the SDK's own in-memory client: tools, their schemas, the
add → search → inject → ack loop on real files under real Redis locks, and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from swarmq.coord.cluster import Cluster
from swarmq.coord.lockmode import UnreachableLocks
from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge._loaded import forget, loaded
from swarmq.knowledge.hive import promote_lesson
from swarmq.knowledge.model import Entry
from swarmq.knowledge.recall import recall_error
from swarmq.mcp.server import Caller, build_server
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.wiring.knowledge import knowledge_store
from tests.support import write_roster

TOOLS = {
    "knowledge_search",
    "knowledge_inject",
    "knowledge_recall_error",
    "knowledge_add",
    "knowledge_ack",
    "memory_search",
    "mission_submit",
    "mission_status",
    "mission_list",
}
LESSON = "Always run the alembic migration check before merging a schema change to main"


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    return " ".join(getattr(c, "text", "") for c in result.content)


def entries(roster: Roster) -> list[dict[str, Any]]:
    path = roster.swarm_dir / "knowledge.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def roster(roster_file: Path) -> Roster:
    return load_roster(roster_file)


@pytest.fixture
def cluster(roster: Roster) -> Cluster:
    return Cluster.connect(roster.cluster_config())


def test_tools_are_listed_with_schemas_and_descriptions(roster: Roster, cluster: Cluster) -> None:
    server = build_server(roster, cluster.locks, caller=Caller("w1", "s1"))

    async def main() -> None:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and len(tool.description) > 30, tool.name
                assert tool.input_schema["type"] == "object"
            add = tools["knowledge_add"].input_schema
            assert add["required"] == ["lesson"]
            assert {"lesson", "category", "tags", "evidence"} <= set(add["properties"])
            ack = tools["knowledge_ack"].input_schema["properties"]
            assert "applied" in json.dumps(ack["verdict"])
            templates = (await client.list_resource_templates()).resource_templates
            assert {t.uri_template for t in templates} >= {
                "swarmq://workers/{worker_id}/identity",
                "swarmq://workers/{worker_id}/memory",
                "swarmq://workers/{worker_id}/handoff",
            }

    anyio.run(main)


def test_add_search_inject_ack_moves_the_entry(roster: Roster, cluster: Cluster) -> None:
    server = build_server(roster, cluster.locks, caller=Caller("w1", "session-7"))

    async def main() -> None:
        async with Client(server) as client:
            added = data(
                await client.call_tool(
                    "knowledge_add",
                    {"lesson": LESSON, "tags": ["alembic"], "evidence": "alembic check failed"},
                )
            )
            assert added["outcome"] == "added"
            entry_id = added["id"]
            on_disk = {e["id"]: e for e in entries(roster)}
            assert on_disk[entry_id]["recorded_by"] == {
                "kind": "agent",
                "via": "mcp",
                "worker_id": "w1",
                "session_id": "session-7",
            }
            assert on_disk[entry_id]["evidence"] == "alembic check failed"

            again = data(await client.call_tool("knowledge_add", {"lesson": LESSON}))
            assert again["outcome"] == "duplicate" and again["id"] == entry_id
            assert len(entries(roster)) == 1

            found = data(await client.call_tool("knowledge_search", {"query": "alembic migration"}))
            assert found["results"][0]["id"] == entry_id

            injected = data(
                await client.call_tool(
                    "knowledge_inject", {"task": "merge the schema change with a new migration"}
                )
            )
            assert injected["trace_id"] and entry_id in injected["block"]
            assert [e["id"] for e in injected["entries"]] == [entry_id]

            acked = data(
                await client.call_tool(
                    "knowledge_ack",
                    {
                        "trace_id": injected["trace_id"],
                        "entry_id": entry_id,
                        "verdict": "applied",
                        "reason": "ran the check\nfirst",
                    },
                )
            )
            assert acked["status"] == "committed"
            after = Entry({**{e["id"]: e for e in entries(roster)}[entry_id]}).outcomes
            assert after["acknowledged_count"] == 1 and after["applied_explicit_count"] == 1
            assert after["shown_count"] == 1
            receipts = (roster.swarm_dir / "knowledge-receipts-v2.jsonl").read_text()
            assert '"source":"mcp"' in receipts.replace(" ", "")

            twice = data(
                await client.call_tool(
                    "knowledge_ack",
                    {"trace_id": injected["trace_id"], "entry_id": entry_id, "verdict": "applied"},
                )
            )
            assert twice["status"] == "duplicate"
            conflicting = await client.call_tool(
                "knowledge_ack",
                {"trace_id": injected["trace_id"], "entry_id": entry_id, "verdict": "ignored"},
            )
            assert "conflicting terminal" in error_text(conflicting)

            silent = data(
                await client.call_tool("knowledge_inject", {"task": "paint the logo purple"})
            )
            assert silent["block"] is None and silent["entries"] == []

    anyio.run(main)


def test_rejections_and_errors_are_tool_errors(roster: Roster, cluster: Cluster) -> None:
    server = build_server(roster, cluster.locks, caller=Caller(None, None))

    async def main() -> None:
        async with Client(server) as client:
            short = await client.call_tool("knowledge_add", {"lesson": "too short"})
            assert "validation layer 1" in error_text(short)
            assert "lesson too short (min 15 chars)" in error_text(short)
            unsafe = await client.call_tool(
                "knowledge_add",
                {"lesson": "When the disk is full just run rm -rf / on the build host to fix it"},
            )
            assert "validation layer 2: dangerous command pattern" in error_text(unsafe)
            assert not (roster.swarm_dir / "knowledge.jsonl").exists() or entries(roster) == []
            rejected = (roster.swarm_dir / "knowledge-rejected.jsonl").read_text()
            assert "too short" in rejected
            unknown = await client.call_tool(
                "knowledge_ack", {"trace_id": "nope", "entry_id": "x", "verdict": "applied"}
            )
            assert "unknown trace nope" in error_text(unknown)
            bad = await client.call_tool(
                "knowledge_ack", {"trace_id": "a b", "entry_id": "x", "verdict": "applied"}
            )
            assert bad.is_error
            missing = await client.call_tool("mission_status", {"mission_id": "m-none"})
            assert "not found: no mission 'm-none'" in error_text(missing)
            worker = await client.call_tool(
                "memory_search", {"query": "x", "scope": "worker", "worker_id": "ghost"}
            )
            assert "not found: unknown worker 'ghost'" in error_text(worker)

    anyio.run(main)


def test_recall_error_and_memory_and_resources(roster: Roster, cluster: Cluster) -> None:
    profile = roster.profiles_dir / "w1" / "memory"
    profile.mkdir(parents=True)
    (profile / "IDENTITY.md").write_text("# w1\nI build the parser.\n")
    (profile / "MEMORY.md").write_text("The flaky parser test needs a fixed seed.\n")
    server = build_server(roster, cluster.locks, caller=Caller("w1", "s2"))

    async def main() -> None:
        async with Client(server) as client:
            lesson = (
                "When pytest fails with ModuleNotFoundError for yaml, install types-PyYAML and "
                "pyyaml in the venv"
            )
            evidence = "$ pytest -q tests/roster\nModuleNotFoundError: No module named 'yaml'"
            added = data(
                await client.call_tool("knowledge_add", {"lesson": lesson, "evidence": evidence})
            )
            recalled = data(
                await client.call_tool(
                    "knowledge_recall_error",
                    {
                        "call": "pytest -q tests/roster",
                        "error": "ModuleNotFoundError: No module named 'yaml'",
                    },
                )
            )
            assert recalled["trace_id"] and [e["id"] for e in recalled["entries"]] == [added["id"]]
            unrelated = data(
                await client.call_tool(
                    "knowledge_recall_error", {"call": "ls x", "error": "ls: x: Permission denied"}
                )
            )
            assert unrelated["entries"] == [] and unrelated["block"] is None
            hits = data(await client.call_tool("memory_search", {"query": "flaky parser"}))
            assert any("MEMORY.md" in h["path"] for h in hits["results"])
            identity = await client.read_resource("swarmq://workers/w1/identity")
            assert "I build the parser" in identity.contents[0].text  # type: ignore[union-attr]
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            assert "swarmq://workers/w1/memory" in listed

    anyio.run(main)


def test_a_write_that_cannot_lock_is_an_error_and_nothing_is_written(roster: Roster) -> None:
    """Redis down: reads go on, a write is refused as ``unavailable`` and never reported done."""
    server = build_server(roster, UnreachableLocks("redis://127.0.0.1:1 does not answer"))

    async def main() -> None:
        async with Client(server) as client:
            refused = await client.call_tool("knowledge_add", {"lesson": LESSON})
            assert "unavailable: cannot lock" in error_text(refused)
            assert "does not answer" in error_text(refused)
            found = data(await client.call_tool("knowledge_search", {"query": "alembic"}))
            assert found["results"] == []

    anyio.run(main)
    assert not (roster.swarm_dir / "knowledge.jsonl").exists() or entries(roster) == []


def test_mission_verbs_go_through_the_mission_client(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: object
) -> None:
    """Submitted to the worker's queue (no worker runs: the message waits in Redis)."""
    worker = {"id": "w1", "role": "builder", "queues": ["missions"], "agent": {"command": ["true"]}}
    roster_file = write_roster(
        tmp_path / "m",
        swarm_name,
        redis_url,
        workers=[worker],
        missions={"require_live_worker": False},
    )
    roster = load_roster(roster_file)
    server = build_server(
        roster, Cluster.connect(roster.cluster_config()).locks, caller=Caller(None, None)
    )

    async def main() -> None:
        async with Client(server) as client:
            args = {"objective": "Fix the flaky parser test", "worker": "w1", "key": "t-1"}
            submitted = data(await client.call_tool("mission_submit", args))["mission"]
            again = data(await client.call_tool("mission_submit", args))["mission"]
            assert again["id"] == submitted["id"] and submitted["clientKey"] == "t-1"
            shown = data(await client.call_tool("mission_status", {"mission_id": submitted["id"]}))
            assert shown["mission"]["objective"] == "Fix the flaky parser test"
            listed = data(await client.call_tool("mission_list", {}))["missions"]
            assert [m["id"] for m in listed] == [submitted["id"]]
            assert submitted["state"] == "planning", submitted
            unknown = await client.call_tool("mission_submit", {"objective": "x", "worker": "zz"})
            assert "not found: unknown worker 'zz'" in error_text(unknown)  # nothing written

    anyio.run(main)


def test_recall_error_in_a_server_that_has_not_loaded_the_stores_does_not_load_them(
    roster: Roster, cluster: Cluster
) -> None:
    """The server recalls (and records the injection) through the stores' persisted indexes,
    answering what a process holding the stores answers."""
    knowledge = knowledge_store(roster, cluster.locks)
    lesson = (
        "`pytest -q tests/roster` failed (ModuleNotFoundError: No module named 'yaml'); "
        "install pyyaml in the venv."
    )
    evidence = "$ pytest -q tests/roster\nModuleNotFoundError: No module named 'yaml'"
    knowledge.add_lesson(lesson)
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    promote_lesson(knowledge, lesson, "tooling")  # the hive's copy: dropped
    expected = recall_error(knowledge, evidence, record=False)
    assert [r.tier for r in expected.shown] == ["swarm"]
    files = [knowledge.swarm.files.knowledge, knowledge.hive.files.knowledge]
    for path in files:
        FileIndex.open(path).close()  # type: ignore[union-attr]  # as after a first search
        forget(path)
    server = build_server(roster, cluster.locks, caller=Caller("w1", "s3"))

    async def main() -> None:
        async with Client(server) as client:
            recalled = data(
                await client.call_tool(
                    "knowledge_recall_error",
                    {
                        "call": "pytest -q tests/roster",
                        "error": "ModuleNotFoundError: No module named 'yaml'",
                    },
                )
            )
            assert [e["id"] for e in recalled["entries"]] == [r.entry.id for r in expected.shown]

    anyio.run(main)
    assert all(loaded(path).state is None for path in files), "a store was loaded"
    shown = knowledge.swarm.get(expected.shown[0].entry.id)  # recorded
    assert shown is not None and shown.counter("shown_count") == 1
