"""An independent client, the official TypeScript MCP SDK (tests/mcp/node, pinned in its
package-lock.json; `.ci/run` runs `npm ci` there), drives ``swarmq mcp`` over stdio: it lists
the tools and completes add → search → inject → ack, and a refused add is a tool error naming
the validation rule."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarmq.roster.loader import load_roster

NODE_DIR = Path(__file__).parent / "node"


def test_typescript_sdk_client(roster_file: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript SDK client cannot run here")
    assert (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), (
        f"run `npm ci` in {NODE_DIR} (.ci/run does)"
    )
    done = subprocess.run(
        [node, "client.mjs", sys.executable, str(roster_file)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"knowledge_add", "knowledge_search", "knowledge_inject", "knowledge_ack"} <= set(
        out["tools"]
    )
    assert {"knowledge_recall_error", "memory_search", "mission_submit"} <= set(out["tools"])
    entry_id = out["added"]["id"]
    assert out["added"]["outcome"] == "added"
    assert out["search"]["results"][0]["id"] == entry_id
    assert out["inject"]["trace_id"] and entry_id in out["inject"]["block"]
    assert out["ack"]["status"] == "committed"
    assert out["ack"]["counters"]["applied_explicit_count"] == 1
    assert out["refused"]["isError"]
    assert "validation layer 1: lesson too short (min 15 chars)" in out["refused"]["text"]
    roster = load_roster(roster_file)
    [line] = (roster.swarm_dir / "knowledge.jsonl").read_text().splitlines()
    entry = json.loads(line)
    assert entry["retrieval_outcomes"]["acknowledged_count"] == 1
    assert entry["recorded_by"]["session_id"] == "node-session"
