"""Promoted learnings reach the swarm-tier knowledge store whole: technical lessons with inline
code are kept, tags are clean, the promotion is the entry's confirmation, and the artifact is
written in the AgentOps learning format once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster

LESSONS = [
    (
        "decision",
        "architecture",
        "Keep the broker on Redis: the quota gate already needs `INCRBY` with a TTL, so "
        "one `redis-server` serves both.",
    ),
    (
        "solution",
        "",
        "Run `pytest -x -q tests/coord` before pushing: the lease tests catch fencing "
        "regressions that the unit tests miss.",
    ),
    (
        "learning",
        "workflow",
        "Set `worker_prefetch_multiplier=1` so a long task does not hold a second "
        "message past the visibility timeout.",
    ),
    (
        "failure",
        "",
        "The worker crashed because `acks_late` was off: a task killed mid-run was never "
        "redelivered, so set `task_acks_late=True`.",
    ),
    (
        "learning",
        "architecture",
        "Write store files with `os.replace` after `fsync` so a crash never "
        "leaves a half-written `knowledge.jsonl` behind.",
    ),
    (
        "decision",
        "decision",
        "We chose `uv pip compile` for the lock file because it resolves the "
        "whole tree in seconds and `pip-tools` did not.",
    ),
]


def pending_file(root: Path) -> Path:
    blocks = []
    for number, (category, kclass, body) in enumerate(LESSONS, 1):
        lines = [
            f"# Learning: lesson {number}",
            "",
            f"**ID**: L{number}",
            f"**Category**: {category}",
            "**Confidence**: high",
        ]
        if kclass:
            lines.append(f"**Class**: {kclass}")
        lines += [
            "**Session**: ag-s1",
            "",
            "## What We Learned",
            "",
            body,
            "",
            "## Source",
            "",
            "Session: ag-s1",
            "",
        ]
        blocks.append("\n".join(lines))
    path = root / ".agents" / "knowledge" / "pending" / "2026-03-01-session.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ndate: 2026-03-01\n---\n\n" + "\n".join(blocks), encoding="utf-8")
    return path


def run(roster: Path, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(app, ["-c", str(roster), *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args else result.output


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        flywheel={"promotion_age_hours": 0, "min_citations": 0, "bronze_min_citations": 0},
    )


def test_six_technical_learnings_with_inline_code_bridge_with_clean_tags(
    roster_file: Path,
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".swarm").mkdir()
    pending_file(project)
    done = run(roster_file, "flywheel", "close-loop", "--json")
    assert done["ingest"]["added"] == 6
    promoted = done["promoted"]
    assert len(promoted) == 6, done["held"]
    outcomes = [k["outcome"] for k in done["knowledge"]]
    assert outcomes == ["added"] * 6, done["knowledge"]
    entries = run(roster_file, "knowledge", "list", "--json")["entries"]
    assert len(entries) == 6
    for entry in entries:
        assert "`" in entry["lesson"]
        assert len(entry["tags"]) == len(set(entry["tags"])) and entry["tags"][0] == "agentops"
        assert [c["phase_number"] for c in entry["confirmed_by"]] == [0]
    audit = run(roster_file, "knowledge", "audit", "--json")["tiers"][0]
    assert audit["unhealthy"] == []
    # each artifact holds the learning once, in the AgentOps format
    for item in promoted:
        text = Path(item["artifact_path"]).read_text(encoding="utf-8")
        assert text.startswith("---\nid: ")
        counts = [text.count(s) for s in ("\n# ", "## What We Learned", "## Source", "**ID**")]
        assert counts == [1, 1, 1, 0], text


def test_a_dangerous_command_is_still_refused_and_reported(
    roster_file: Path,
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".swarm").mkdir()
    pending = pending_file(project)
    pending.write_text(
        pending.read_text().replace(
            "Write store files with `os.replace`",
            "Clean the build with `sudo rm -rf /opt/app` and write store files with `os.replace`",
        )
    )
    done = run(roster_file, "flywheel", "close-loop", "--json")
    outcomes = sorted(k["outcome"] for k in done["knowledge"])
    assert outcomes == ["added"] * 5 + ["rejected"]
    refused = next(k for k in done["knowledge"] if k["outcome"] == "rejected")
    assert "dangerous" in refused["reason"] and Path(refused["artifact_path"]).exists()
    assert len(run(roster_file, "knowledge", "list", "--json")["entries"]) == 5
