"""Recall from every store, at a failing call, at session start and in a mission's prompt: a
workspace holding one tool-error lesson in ``.swarm/`` and as the AgentOps learning it was
bridged from, a pool candidate and a worker memory note of the same failure, a shared note
repeating the lesson, a learning stating a project fact, and entries that must stay out (another
failure's candidate, a pool candidate and a memory note that state facts). Each entry point
answers each fact once, whole; an unrelated failure or task gets nothing and records nothing.
Real files, real Redis locks."""

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
from swarmq.hooks.server import HookService
from swarmq.mcp.server import Caller, build_server
from swarmq.roster.loader import load_roster
from swarmq.wiring.knowledge import knowledge_store
from swarmq.wiring.missions import DeferredKnowledge
from tests.support import write_roster

LEARNING_FILE = ".agents/learnings/2026-12-01-python-is-python3.md"
LESSON = (
    "`python manage.py migrate` failed (zsh: command not found: python); python is python3 on "
    "this machine: run `python3 manage.py migrate`, and every other script with python3 too."
)
FACT_FILE = ".agents/learnings/2026-12-02-no-commits.md"
FACT = "The user does not want automatic commits: leave every change staged for review."
CANDIDATE = (
    "`python scripts/seed.py` failed (zsh: command not found: python); the seed script runs "
    "under python3 once the virtualenv in .venv is activated."
)
OTHER_FAILURE = "`npm test` failed (sh: 1: jest: not found); run npm ci first, jest is local."
POOL_FACT = "Always use pnpm in this repository, never npm: the lockfile is pnpm-lock.yaml."
NOTE = (
    "- 2026-12-01: `python -m pytest` failed (zsh: command not found: python); the mission ran "
    "python3 -m pytest instead because missions start without the venv."
)
MEMORY_FACT = "- never push to main from a mission branch; open a pull request"
FAILURE = "$ python manage.py migrate\nzsh: command not found: python"
UNRELATED = "$ cargo build\nerror: linker `cc` not found"


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(tmp_path, swarm_name, redis_url)


def _learning(path: Path, ident: str, title: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nid: {ident}\ntype: learning\nmaturity: established\nutility: 0.7\n---\n"
        f"# Learning: {title}\n\n{body}\n",
        encoding="utf-8",
    )


def _candidate(pending: Path, ident: str, content: str, signature: str | None) -> None:
    candidate: dict[str, Any] = {"id": ident, "type": "solution", "content": content}
    if signature is not None:
        candidate["metadata"] = {"failure_signature": signature}
    (pending / f"{ident}.json").write_text(
        json.dumps(
            {
                "candidate": candidate,
                "scoring_result": {},
                "status": "pending",
                "added_at": "2026-12-01T10:00:00Z",
            }
        ),
        encoding="utf-8",
    )


@pytest.fixture
def workspace(roster_file: Path) -> dict[str, Any]:
    roster = load_roster(roster_file)
    project = roster.workspace_dir
    _learning(project / LEARNING_FILE, "learn-python3", "python is python3 here", LESSON)
    _learning(project / FACT_FILE, "learn-no-commits", "no automatic commits", FACT)
    pending = project / ".agents" / "pool" / "pending"
    pending.mkdir(parents=True)
    _candidate(pending, "pend-seed", CANDIDATE, "python: command not found")
    _candidate(pending, "pend-jest", OTHER_FAILURE, None)
    _candidate(pending, "pend-pnpm", POOL_FACT, "")
    memory = roster.profiles_dir / "w1" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(f"# Memory\n\n{NOTE}\n{MEMORY_FACT}\n", encoding="utf-8")
    roster.shared_dir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster.connect(roster.cluster_config())
    store = knowledge_store(roster, cluster.locks)
    roster.swarm_dir.mkdir(parents=True, exist_ok=True)
    bridged = store.add_lesson(
        LESSON,
        category="tooling",
        tags=["agentops", "learning"],
        auto_generated=True,
        source_refs=[LEARNING_FILE],
        phase=0,
    )
    assert bridged.entry is not None
    # The shared notes repeat the bridged lesson word for word: a near-duplicate, shown once.
    (roster.shared_dir / "notes.md").write_text(f"# Shared\n\n{LESSON}\n", encoding="utf-8")
    return {"roster": roster, "cluster": cluster, "entry": bridged.entry.id}


def cli(roster: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, ["-c", str(roster), *args])
    assert result.exit_code == 0, result.output
    return (
        json.loads(result.stdout) if "--json" in args and result.stdout.strip() else result.output
    )


def _citations(workspace: dict[str, Any]) -> list[dict[str, Any]]:
    path = workspace["roster"].agents_dir / "ao" / "citations.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _check_failure_answer(shown: list[dict[str, Any]], entry_id: str) -> None:
    """The lesson once (the swarm entry, with its learning and the shared note beside it), the
    candidate and the worker note of the same failure, whole; nothing of another failure."""
    assert [s["store"] for s in shown] == ["swarm", "candidate", "worker-memory"], shown
    lesson = shown[0]
    assert lesson["id"] == entry_id and lesson["lesson"] == LESSON
    assert {a["store"] for a in lesson["also_in"]} == {"learning", "shared-memory"}
    assert shown[1]["id"] == "pend-seed" and shown[1]["lesson"] == CANDIDATE
    assert shown[2]["lesson"] == NOTE


def test_failure_hook_recalls_from_every_store_once(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    service = HookService(roster_file)
    silent = service.answer({"op": "failure", "text": UNRELATED, "session_id": "s0"})
    assert silent == {"context": None}
    assert _citations(workspace) == []  # silence records nothing

    answer = service.answer({"op": "failure", "text": FAILURE, "session_id": "s1"})
    block = answer["context"]
    assert block and block.count("- id: ") == 3 == len(answer["shown"])
    assert answer["shown"][0] == workspace["entry"] and "pend-seed" in answer["shown"]
    assert block.count("python3 manage.py migrate") == 1  # the lesson once, not three times
    assert CANDIDATE in block and NOTE in block  # whole
    assert OTHER_FAILURE not in block
    store = knowledge_store(workspace["roster"], workspace["cluster"].locks)
    entry = store.swarm.get(workspace["entry"])
    assert entry is not None and entry.counter("shown_count") == 1
    exposure = {(c["artifact_path"], c["citation_type"]) for c in _citations(workspace)}
    assert exposure == {
        (LEARNING_FILE, "retrieved"),
        (".agents/pool/pending/pend-seed.json", "retrieved"),
    }
    # any shown id can be acknowledged against the trace
    marker = f"KNOWLEDGE_APPLIED:{answer['trace_id']}:pend-seed"
    assert cli(roster_file, "knowledge", "ack", marker, "--json")[0]["status"] == "committed"


def test_recall_cli_answers_each_fact_once(workspace: dict[str, Any], roster_file: Path) -> None:
    recalled = cli(roster_file, "knowledge", "recall", "--error", FAILURE, "--preview", "--json")
    _check_failure_answer(recalled["shown"], workspace["entry"])
    assert _citations(workspace) == []  # a preview records nothing
    nothing = cli(roster_file, "knowledge", "recall", "--error", UNRELATED, "--json")
    assert nothing["shown"] == [] and nothing["block"] is None
    one = cli(roster_file, "knowledge", "recall", "--error", FAILURE, "--limit", "1", "--json")
    assert [s["id"] for s in one["shown"]] == [workspace["entry"]]


def test_session_start_adds_learned_facts_not_pool_or_memory(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    started = cli(roster_file, "knowledge", "inject", "--session-start", "--json", "--preview")
    shown = started["shown"]
    assert [s["store"] for s in shown] == ["swarm", "learning"], shown
    assert shown[0]["id"] == workspace["entry"]  # a fact (python is python3), bridged: once
    assert [a["store"] for a in shown[0]["also_in"]] == ["learning"]
    assert shown[1]["lesson"].endswith(FACT)  # the whole learning, its heading included
    block = started["block"]
    assert POOL_FACT not in block and "never push to main" not in block

    service = HookService(roster_file)
    answer = service.answer({"op": "session-start", "session_id": "s-start"})
    assert answer["shown"][0] == workspace["entry"] and len(answer["shown"]) == 2
    assert FACT in answer["context"]


def test_session_start_without_facts_stays_silent(roster_file: Path) -> None:
    roster = load_roster(roster_file)
    _learning(
        roster.workspace_dir / ".agents/learnings/x.md",
        "learn-ipc",
        "ipc",
        "Validate every Electron IPC payload in the main process with a zod schema.",
    )
    service = HookService(roster_file)
    assert service.answer({"op": "session-start", "session_id": "s"}) == {"context": None}


def test_mission_prompt_block_comes_from_every_store(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    roster, locks = workspace["roster"], workspace["cluster"].locks
    knowledge = DeferredKnowledge(roster, locks, agent="builder", worker_id="w1")
    block = knowledge("Seed the database: python scripts/seed.py under python3", 4000)
    assert block.count("python3 manage.py migrate") <= 1
    assert CANDIDATE in block and "id: pend-seed" in block
    assert _citations(workspace) == []  # a pure read until the agent runs
    knowledge.record()
    assert any("pend-seed" in c["artifact_path"] for c in _citations(workspace))
    assert knowledge("Bake a sourdough loaf with a long cold proof", 4000) == ""


def test_memory_search_stays_memory_and_points_to_the_other_stores(
    workspace: dict[str, Any], roster_file: Path
) -> None:
    # memory holds nothing about commits; the learning that states the fact is shown beside it
    empty = cli(roster_file, "memory", "search", "automatic commits staged review", "--json")
    assert empty["results"] == []
    assert [r["store"] for r in empty["elsewhere"]] == ["learning"]
    assert empty["elsewhere"][0]["lesson"].endswith(FACT)
    said = cli(roster_file, "memory", "search", "automatic commits staged review")
    assert "memory holds nothing" in said and "learn-no-commits" in said
    # memory's own answer stays memory's: no other store mixed in
    own = cli(roster_file, "memory", "search", "python3 manage.py migrate", "--json")
    assert own["results"] and "elsewhere" not in own
    # --every-store: the fused answer, the lesson once with its learning and shared copy beside it
    every = cli(roster_file, "memory", "search", "python3 manage.py migrate", "--every-store",
                "--json")  # fmt: skip
    assert every[0]["id"] == workspace["entry"]
    assert {a["store"] for a in every[0]["also_in"]} == {"learning", "shared-memory"}
    assert len({r["id"] for r in every}) == len(every)
    nothing = cli(roster_file, "memory", "search", "sourdough cold proof", "--json")
    assert nothing["results"] == [] and nothing["elsewhere"] == []


def test_mcp_recall_tool_answers_from_every_store(workspace: dict[str, Any]) -> None:
    server = build_server(workspace["roster"], workspace["cluster"].locks, caller=Caller("w1"))

    async def main() -> tuple[Any, Any]:
        async with Client(server) as client:
            found = await client.call_tool(
                "knowledge_recall_error",
                {"call": "python manage.py migrate", "error": "zsh: command not found: python"},
            )
            none = await client.call_tool(
                "knowledge_recall_error", {"call": "cargo build", "error": "linker `cc` not found"}
            )
            return found.structured_content, none.structured_content

    found, none = anyio.run(main)
    entries = found["entries"]
    assert [e["store"] for e in entries] == ["swarm", "candidate", "worker-memory"]
    assert entries[0]["id"] == workspace["entry"] and entries[0]["lesson"] == LESSON
    assert len(entries[0]["also_in"]) == 2 and entries[1]["lesson"] == CANDIDATE
    assert found["block"].count("python3 manage.py migrate") == 1
    assert none["block"] is None and none["entries"] == []
