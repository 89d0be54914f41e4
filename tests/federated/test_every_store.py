"""One question, every store: a workspace holding one lesson in ``.swarm/`` and as the AgentOps
learning it was bridged from, a pool candidate, a worker memory note and a shared note that
repeats the lesson. ``lookup``, ``knowledge search``, ``knowledge inject``, the MCP tools and
the prompt hook answer each fact once, ranked together, whole; a task nothing is relevant to
stays silent everywhere. Real files, real Redis locks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis
from mcp import Client
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.coord.cluster import Cluster
from swarmq.federated.finding import Finding, Store
from swarmq.federated.fuse import fuse, same_text
from swarmq.hooks.server import HookService
from swarmq.mcp.server import Caller, build_server
from swarmq.roster.loader import load_roster
from swarmq.wiring.knowledge import knowledge_store
from tests.support import write_roster

LEARNING_BODY = (
    "Validate every Electron IPC payload in the main process with a zod schema before acting "
    "on it, because the renderer is untrusted: a compromised page can send any object through "
    "ipcRenderer.invoke. Reject unknown channels in the preload bridge too, and log the refused "
    "payload with its channel name so the attack shows up in the crash reports. Use "
    "/NoWorkingDir semantics nowhere: the working directory of the packaged app is not the "
    "project, so resolve every path from app.getPath('userData')."
)
LEARNING_FILE = ".agents/learnings/2026-12-01-electron-ipc-validation.md"
CANDIDATE = (
    "Electron IPC handlers that return large buffers should stream them through a MessagePort "
    "instead of a single invoke reply, since the validation of one huge payload blocks the main "
    "process."
)
NOTE = (
    "- Electron IPC: the preload script exposes only typed invoke wrappers, validation lives in "
    "src/main/ipc.ts next to each handler."
)


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(tmp_path, swarm_name, redis_url)


@pytest.fixture
def workspace(roster_file: Path, tmp_path: Path) -> dict[str, Any]:
    roster = load_roster(roster_file)
    project = roster.workspace_dir
    learning = project / LEARNING_FILE
    learning.parent.mkdir(parents=True)
    learning.write_text(
        "---\nid: learn-electron-ipc\ntype: learning\nmaturity: established\nutility: 0.7\n---\n"
        f"# Learning: validate Electron IPC payloads\n\n{LEARNING_BODY}\n",
        encoding="utf-8",
    )
    pending = project / ".agents" / "pool" / "pending"
    pending.mkdir(parents=True)
    (pending / "pend-ipc-stream.json").write_text(
        json.dumps(
            {
                "candidate": {"id": "pend-ipc-stream", "type": "solution", "content": CANDIDATE},
                "scoring_result": {},
                "status": "pending",
                "added_at": "2026-12-01T10:00:00Z",
            }
        ),
        encoding="utf-8",
    )
    memory = roster.profiles_dir / "w1" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(f"# Memory\n\n{NOTE}\n", encoding="utf-8")
    roster.shared_dir.mkdir(parents=True, exist_ok=True)
    # The shared notes repeat the bridged lesson word for word: a near-duplicate, shown once.
    cluster = Cluster.connect(roster.cluster_config())
    store = knowledge_store(roster, cluster.locks)
    roster.swarm_dir.mkdir(parents=True, exist_ok=True)
    bridged = store.add_lesson(
        "Validate every Electron IPC payload in the main process with a zod schema before acting "
        "on it, because the renderer is untrusted: a compromised page can send any object.",
        category="security",
        tags=["agentops", "learning"],
        auto_generated=True,
        source_refs=[LEARNING_FILE],
        phase=0,
    )
    assert bridged.entry is not None
    (roster.shared_dir / "notes.md").write_text(
        f"# Shared\n\n{bridged.entry.lesson}\n", encoding="utf-8"
    )
    return {"roster": roster, "cluster": cluster, "entry": bridged.entry.id}


def cli(roster: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, ["-c", str(roster), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.output


QUERY = "electron ipc payload validation"


def _check_each_fact_once(results: list[dict[str, Any]], entry_id: str, first: str) -> None:
    """Each fact once: the bridged lesson stands as ``first`` (the swarm entry, or for
    lookup the learning) with the other two copies beside it."""
    ids = [r["id"] for r in results]
    assert len(ids) == len(set(ids))
    stores = [r["store"] for r in results]
    lesson = [r for r in results if r["store"] == first]
    assert len(lesson) == 1, ids
    also = {a["store"] for a in lesson[0]["also_in"]}
    # the learning it was bridged from and the shared note repeating it are the same fact
    assert also == {"learning", "swarm", "shared-memory"} - {first}, lesson[0]["also_in"]
    assert entry_id in {lesson[0]["id"], *(a["id"] for a in lesson[0]["also_in"])}
    assert {"candidate", "worker-memory"} <= set(stores)
    assert len(stores) == len(set(stores)) == 3  # swarm or learning, candidate, worker note
    texts = [r["lesson"] for r in results]
    assert any(t == CANDIDATE for t in texts)  # whole, not a 240-character snippet
    assert any("typed invoke wrappers" in t and t.endswith("handler.") for t in texts)


def test_search_and_lookup_answer_each_fact_once(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    found = cli(roster_file, "knowledge", "search", QUERY, "--json")
    _check_each_fact_once(found, workspace["entry"], "swarm")
    assert found[0]["id"] == workspace["entry"]  # found by two stores and the note: first
    citations = workspace["roster"].agents_dir / "ao" / "citations.jsonl"
    assert not citations.exists()  # search records nothing

    looked = cli(roster_file, "lookup", QUERY, "--json", "--session", "s-look")
    _check_each_fact_once(looked["results"], workspace["entry"], "learning")
    assert looked["results"][0]["store"] == "learning"
    assert looked["results"][0]["cite_as"] == LEARNING_FILE
    cited = [json.loads(line) for line in citations.read_text().splitlines()]
    # exposure only: the learning behind the bridged entry and the candidate, as retrieved
    assert {c["artifact_path"] for c in cited} == {
        LEARNING_FILE,
        ".agents/pool/pending/pend-ipc-stream.json",
    }
    assert {c["citation_type"] for c in cited} == {"retrieved"}
    assert looked["cited"] == 2


def test_inject_shows_whole_lessons_once_and_records_them(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    injected = cli(roster_file, "knowledge", "inject", QUERY, "--json", "--session", "s-inj")
    block = injected["block"]
    shown = injected["shown"]
    assert block and block.count("- id: ") == len(shown) >= 3
    assert CANDIDATE in block  # whole (opencode-swarm's 120-character cut lost the end)
    assert block.count("compromised page can send any object") == 1
    ids = [s["id"] for s in shown]
    assert ids[0] == workspace["entry"] and len(set(ids)) == len(ids)
    store = knowledge_store(workspace["roster"], workspace["cluster"].locks)
    entry = store.swarm.get(workspace["entry"])
    assert entry is not None and entry.counter("shown_count") == 1
    # any shown id can be acknowledged against the trace
    marker = f"KNOWLEDGE_N_A:{injected['trace_id']}:{ids[-1]} reason=not this task"
    acks = cli(roster_file, "knowledge", "ack", marker, "--json")
    assert acks[0]["status"] == "committed", acks
    citations = workspace["roster"].agents_dir / "ao" / "citations.jsonl"
    exposure = [json.loads(line) for line in citations.read_text().splitlines()]
    # shown is exposure: the learning behind the entry and the candidate, retrieved only
    assert {c["artifact_path"] for c in exposure} == {
        LEARNING_FILE,
        ".agents/pool/pending/pend-ipc-stream.json",
    }
    assert {(c["citation_type"], c["match_provenance"]) for c in exposure} == {
        ("retrieved", "knowledge-injection")
    }
    # applying the candidate the block showed itself is use: fed back to its pool file
    assert "pend-ipc-stream" in ids
    applied = f"KNOWLEDGE_APPLIED:{injected['trace_id']}:pend-ipc-stream"
    assert cli(roster_file, "knowledge", "ack", applied, "--json")[0]["status"] == "committed"
    after = [json.loads(line) for line in citations.read_text().splitlines()][len(exposure) :]
    assert [(c["artifact_path"], c["citation_type"]) for c in after] == [
        (".agents/pool/pending/pend-ipc-stream.json", "applied")
    ]


def test_nothing_relevant_stays_silent_everywhere(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    task = "bake a sourdough loaf with a long cold proof"
    assert cli(roster_file, "knowledge", "search", task, "--json") == []
    said = cli(roster_file, "knowledge", "inject", task, "--preview")
    assert "nothing injected" in said and "<swarm_knowledge_directives>" not in said
    assert cli(roster_file, "lookup", task, "--json")["results"] == []
    service = HookService(roster_file)
    assert service.answer({"op": "prompt", "text": task, "session_id": "s1"}) == {"context": None}


def test_prompt_hook_and_mcp_answer_from_every_store(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    service = HookService(roster_file)
    answer = service.answer({"op": "prompt", "text": QUERY, "session_id": "s-hook"})
    assert answer["context"] and CANDIDATE in answer["context"]
    assert answer["shown"][0] == workspace["entry"]
    assert len(answer["shown"]) == len(set(answer["shown"])) >= 3

    server = build_server(workspace["roster"], workspace["cluster"].locks, caller=Caller("w1"))

    async def main() -> tuple[Any, Any]:
        async with Client(server) as client:
            found = await client.call_tool("knowledge_search", {"query": QUERY, "limit": 10})
            injected = await client.call_tool("knowledge_inject", {"task": QUERY})
            return found.structured_content, injected.structured_content

    found, injected = anyio.run(main)
    results = found["results"]
    assert results[0]["id"] == workspace["entry"]
    assert len({r["id"] for r in results}) == len(results)
    assert {r["store"] for r in results} >= {"swarm", "candidate", "worker-memory"}
    assert results[0]["also_in"] and any(r["lesson"] == CANDIDATE for r in results)
    assert injected["block"] and CANDIDATE in injected["block"]


def _finding(store: Store, ident: str, text: str, rank: int, links: frozenset[str]) -> Finding:
    return Finding(store, ident, text, rank, 0.5, ident, links)


def test_fusion_ranks_agreement_first_and_folds_links_and_text() -> None:
    knowledge = [
        _finding(Store.SWARM, "a", "Pin the node version in .nvmrc for CI", 1, frozenset()),
        _finding(Store.SWARM, "b", "Use pnpm fetch in Docker", 2, frozenset({"/w/x.md"})),
    ]
    flywheel = [
        _finding(
            Store.LEARNING,
            "learning:x",
            "A longer body of x, other words",
            1,
            frozenset({"/w/x.md"}),
        ),
    ]
    memory = [
        _finding(
            Store.SHARED_MEMORY,
            "memory:1",
            "pin the Node version in .nvmrc for CI!",
            1,
            frozenset(),
        ),
        _finding(Store.WORKER_MEMORY, "memory:2", "something else entirely here", 2, frozenset()),
    ]
    fused = fuse([knowledge, flywheel, memory])
    assert [f.finding.id for f in fused] == ["a", "b", "memory:2"]
    assert [m.id for m in fused[0].also] == ["memory:1"]
    assert [m.id for m in fused[1].also] == ["learning:x"]
    assert not same_text("", "", 0.6) and not same_text("错误", "修复", 0.6)


def test_flywheel_status_names_the_knowledge_store_beside_no_artifacts(roster_file: Path) -> None:
    roster = load_roster(roster_file)
    roster.swarm_dir.mkdir(parents=True, exist_ok=True)
    store = knowledge_store(roster, Cluster.connect(roster.cluster_config()).locks)
    store.add_lesson("Validate every Electron IPC payload in the main process with zod", phase=1)
    status = cli(roster_file, "flywheel", "status", "--json")
    assert status["total_artifacts"] == 0 and status["knowledge_entries"] == 1
    assert any("holds 1 active entries" in note for note in status["notes"])


def test_fusion_shows_one_store_s_identical_records_once() -> None:
    """Memory merges nothing as written: a mission's objective in its SUMMARY.md and in its
    handoff is one fact. A store that deduplicates on write keeps two near-identical records
    of its own apart (templated lessons) and folds only the same text."""
    objective = "Customers got duplicate invoices when a worker crashed mid-export. Make it safe."
    memory = [
        _finding(Store.SHARED_MEMORY, "memory:1", objective, 1, frozenset()),
        _finding(Store.SHARED_MEMORY, "memory:2", objective, 2, frozenset()),
        _finding(
            Store.SHARED_MEMORY, "memory:3", objective.replace("it", "the export"), 3, frozenset()
        ),
    ]
    knowledge = [
        _finding(
            Store.SWARM, "k1", "`cat docs/workflow.md` failed: use the Read tool", 1, frozenset()
        ),
        _finding(
            Store.SWARM,
            "k2",
            "`cat docs/step-01-init.md` failed: use the Read tool",
            2,
            frozenset(),
        ),
        _finding(
            Store.SWARM, "k3", "`cat docs/workflow.md` failed: use the Read tool!", 3, frozenset()
        ),
    ]
    fused = fuse([knowledge, memory])
    by_id = {f.finding.id: [m.id for m in f.also] for f in fused}
    assert by_id == {"k1": ["k3"], "k2": [], "memory:1": ["memory:2", "memory:3"]}
    objective_score = next(f.score for f in fused if f.finding.id == "memory:1")
    assert objective_score == pytest.approx(1 / 61)  # one store's answer counts once
