"""One 2 KB line of deeply nested JSON in a store or a transcript is a corrupt line, not a crash.

Python's json raises ``RecursionError`` on it (no ``ValueError``), which used to escape every
knowledge command and abort forge. The CLI runs as real subprocesses here, as a user runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import write_roster

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude-code" / "session-v2.0.jsonl"
DEEP = "[" * 1024 + "]" * 1024  # 2 KB, nested 1,024 levels
DEEP_OBJECT = '{"a":' * 400 + "1" + "}" * 400  # 2.4 KB, nested 400: parses, but past the bound


def swarmq(roster: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("swarmq")), "-c", str(roster), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == code, (args, done.stdout[-2000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def test_a_deeply_nested_line_in_the_store_is_quarantined_and_every_command_works(
    tmp_path: Path, swarm_name: str, redis_url: str
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    swarmq(
        roster, "knowledge", "add", "--plain", "Run the python test suite before pushing to main"
    )
    store = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    good = store.read_text(encoding="utf-8")
    store.write_text(good + DEEP + "\n" + DEEP_OBJECT + "\n", encoding="utf-8")

    listed = as_json(swarmq(roster, "knowledge", "list", "--json"))
    assert [e["lesson"] for e in listed["entries"]] == [
        "Run the python test suite before pushing to main"
    ]
    found = swarmq(roster, "knowledge", "search", "python test suite", "--json")
    assert "Run the python test suite" in found.stdout
    injected = swarmq(roster, "knowledge", "inject", "run the python tests")
    assert "Run the python test suite" in injected.stdout
    swarmq(roster, "knowledge", "audit", "--json")
    swarmq(roster, "knowledge", "audit", "--secrets", "--fix")
    swarmq(
        roster, "knowledge", "add", "--plain", "Pin the ruff version in the lock file for CI runs"
    )
    swarmq(roster, "consolidate", "-q")

    lessons = [
        e["lesson"] for e in as_json(swarmq(roster, "knowledge", "list", "--json"))["entries"]
    ]
    assert "Pin the ruff version in the lock file for CI runs" in lessons
    sidecar = store.with_name("knowledge-corrupt.jsonl")
    records = [json.loads(line) for line in sidecar.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["line"], r["text"]) for r in records) == [(2, DEEP), (3, DEEP_OBJECT)]
    assert all("nested" in r["error"] for r in records)
    assert DEEP not in store.read_text(encoding="utf-8")


def test_a_deeply_nested_transcript_record_is_reported_and_the_rest_forged(
    tmp_path: Path, swarm_name: str, redis_url: str
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    (tmp_path / "project" / ".swarm").mkdir()
    clean = tmp_path / "clean" / CLAUDE.name
    clean.parent.mkdir()
    shutil.copy(CLAUDE, clean)
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    hostile = tmp_path / "hostile" / CLAUDE.name
    hostile.parent.mkdir()
    record = json.loads(lines[1])
    record["message"] = {"role": "user", "content": json.loads("[" * 300 + "]" * 300)}
    hostile.write_text(
        "\n".join([lines[0], DEEP, json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8"
    )

    forged = as_json(swarmq(roster, "forge", str(hostile), "--json"))
    assert forged["failures"] == []
    (result,) = forged["results"]
    problems = result["report"]["problems"]
    assert [p["line"] for p in problems] == [2], problems
    assert "nested" in problems[0]["error"]

    other = write_roster(tmp_path / "other", swarm_name + "-b", redis_url)
    (tmp_path / "other" / "project" / ".swarm").mkdir()
    baseline = as_json(swarmq(other, "forge", str(clean), "--json"))["results"][0]
    assert result["new"] == baseline["new"] > 0
