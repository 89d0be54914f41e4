"""``swarmq knowledge``: every verb end to end on a real roster, files and Redis locks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(tmp_path, swarm_name, redis_url)


def run(roster: Path, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(app, ["-c", str(roster), "knowledge", *args])
    assert result.exit_code == code, result.output
    if "--json" in args:
        return json.loads(result.stdout)
    return result.output


def test_every_verb(roster_file: Path, tmp_path: Path) -> None:
    added = run(
        roster_file,
        "add",
        "Run the python test suite before pushing to main",
        "--phase",
        "1",
        "--required-action",
        "run python -m pytest -q",
        "--tool",
        "bash",
        "--json",
    )
    assert added["outcome"] == "added"
    entry_id = added["id"]
    # Plain prose with no action and no scope is held, as opencode-swarm's knowledge_add does.
    held = run(roster_file, "add", "Prefer small commits because reviews go faster", code=1)
    assert "unactionable" in held and "--plain" in held
    queue = tmp_path / "project" / ".swarm" / "knowledge-unactionable.jsonl"
    record = json.loads(queue.read_text(encoding="utf-8"))
    assert record["status"] == "quarantined_unactionable"
    assert record["unactionable_reason"] == "missing_predicate_and_scope"
    rejected = run(roster_file, "add", "too short", "--json", code=1)
    assert rejected["reason"] == "lesson too short (min 15 chars)"
    assert (
        run(roster_file, "reinforce", entry_id, "--phase", "2", "--json")["outcome"] == "reinforced"
    )
    listed = run(roster_file, "list", "--json")
    assert [e["id"] for e in listed["entries"]] == [entry_id]
    assert "pushing to main" in run(roster_file, "list")
    shown = run(roster_file, "show", entry_id, "--json")
    assert shown["_normalized_outcomes"]["shown_count"] == 0
    found = run(roster_file, "search", "python tests", "--json")
    assert found[0]["id"] == entry_id and "score_breakdown" in found[0]
    assert "score" in run(roster_file, "search", "python tests")
    injected = run(roster_file, "inject", "python tests", "--phase", "3", "--json")
    assert injected["shown"][0]["id"] == entry_id and injected["regime"] == "full"
    trace = injected["trace_id"]
    assert "<swarm_knowledge_directives>" in run(roster_file, "inject", "python", "--preview")
    acks = run(roster_file, "ack", f"KNOWLEDGE_APPLIED:{trace}:{entry_id}", "--json")
    assert acks[0]["status"] == "committed"
    receipts = run(roster_file, "verify-receipts", "--json")
    assert receipts["ok"] and receipts["records"] == 2
    assert (
        run(roster_file, "quarantine", entry_id, "bad advice", "--json")["outcome"] == "quarantined"
    )
    assert run(roster_file, "list", "--json")["entries"] == []
    assert run(roster_file, "restore", entry_id, "--json")["status"] == "candidate"
    promoted = run(roster_file, "promote", "--from-swarm", entry_id, "--json")
    assert promoted["outcome"] == "promoted"
    assert len(run(roster_file, "list", "--tier", "hive", "--json")["entries"]) == 1
    swept = run(roster_file, "sweep", "--phase", "9", "--json")
    assert (
        swept["skipped"] is False and run(roster_file, "sweep", "--phase", "9", "--json")["skipped"]
    )
    audit = run(roster_file, "audit", "--json")
    assert audit["tiers"][0]["entries"] == 1
    assert "knowledge audit" in run(roster_file, "audit")
    swarm = tmp_path / "project" / ".swarm"
    (swarm / "context.md").write_text(
        "## Decisions\n- Use a layered module architecture for the api\n"
    )
    assert run(roster_file, "migrate", "--json")["imported"] == 1
    assert run(roster_file, "migrate", "--json")["skipped"] is True
    linked = run(roster_file, "link", "team", "--json")
    assert linked["linkId"] == "team" and linked["copied"] == 2
    assert run(roster_file, "link", "status", "--json")["linked"] is True
    assert run(roster_file, "unlink", "--json")["unlinked"] is True
    # tampering is reported with the first bad sequence number and exit status 1
    journal = swarm / "knowledge-receipts-v2.jsonl"
    journal.write_text(journal.read_text().replace('"applied"', '"ignored"'))
    broken = run(roster_file, "verify-receipts", "--json", code=1)
    assert broken == {**broken, "ok": False, "first_bad_seq": 2}
    run(roster_file, "show", "missing", code=1)


def test_embed_fills_the_vectors_and_audit_names_the_model(roster_file: Path) -> None:
    lessons = [
        "Always pin ruff to an exact version in the lockfile",
        "Run mypy --strict before every merge into main",
        "Set a socket timeout on every redis-py client",
        "Wrap localStorage access in try/catch for Safari private mode",
        "Use app.getPath('userData') for files the Electron app writes",
        "Close the ONNX session in dispose() before the worker exits",
        "Validate every IPC payload in the main process with a zod schema",
        "Write export files to a temporary name and rename them when complete",
        "Compute invoice money in integer cents, never in floats",
        "Give Celery tasks acks_late and an attempt counter for poison messages",
        "Keep vitest stubEnv calls inside beforeEach so tests stay isolated",
        "Apply Supabase migrations with the CLI, never by hand in the dashboard",
    ]
    for lesson in lessons:
        args = ("--tool", "bash", "--required-action", "pin it", "--json")
        assert run(roster_file, "add", lesson, *args)["outcome"] == "added"
    before = run(roster_file, "audit", "--json")["retrieval"]
    assert (before["dense_model"], before["model"]) == ("auto", "minilm")
    assert before["vectors_missing"]["swarm"] != 0  # no query has caught anything up yet
    filled = run(roster_file, "embed", "--limit", "5", "--json")
    assert filled["embedded"]["swarm"] == 5 and filled["missing"]["swarm"] == 7
    assert not filled["done"] and filled["model"] == "minilm"
    filled = run(roster_file, "embed", "--json")
    assert filled["embedded"]["swarm"] == 7 and filled["done"]
    assert run(roster_file, "audit", "--json")["retrieval"]["vectors_missing"]["swarm"] == 0
    assert "hybrid retrieval on minilm (dense_model: auto" in run(roster_file, "audit")
