"""The knowledge lifecycle as a user meets it on the command line: nothing it should keep is lost
(link copy-back, evergreen entries) and encounter scores follow opencode-swarm's arithmetic."""

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
    return json.loads(result.stdout) if "--json" in args else result.output


def test_a_reinforce_made_under_a_link_survives_unlink(roster_file: Path, tmp_path: Path) -> None:
    entry_id = run(roster_file, "add", "Run the python test suite before pushing to main",
                   "--phase", "1", "--json")["id"]
    untouched = run(roster_file, "add", "Pin the redis server version in the CI compose file",
                    "--phase", "1", "--json")["id"]
    linked = run(roster_file, "link", "team", "--json")
    assert linked["copied"] == 2
    reinforced = run(roster_file, "reinforce", entry_id, "--phase", "7", "--json")
    assert reinforced["outcome"] == "reinforced" and reinforced["confidence"] == pytest.approx(0.7)
    new_id = run(roster_file, "add", "Prefer uv over pip for python installs in CI", "--json")["id"]
    out = run(roster_file, "unlink", "--json")
    assert (out["copied"], out["merged"], out["skipped"], out["conflicted"]) == (1, 1, 1, 0)
    assert out["merged_ids"] == [entry_id] and out["copied_ids"] == [new_id]
    back = run(roster_file, "show", entry_id, "--json")
    assert back["confidence"] == pytest.approx(0.7)
    assert [r["phase_number"] for r in back["confirmed_by"]] == [1, 7]
    assert run(roster_file, "show", untouched, "--json")["confidence"] == pytest.approx(0.6)


def test_a_change_on_both_sides_is_a_reported_conflict_and_both_are_kept(
    roster_file: Path, tmp_path: Path,
) -> None:
    entry_id = run(roster_file, "add", "Run the python test suite before pushing to main",
                   "--phase", "1", "--json")["id"]
    run(roster_file, "link", "team", "--json")
    run(roster_file, "reinforce", entry_id, "--phase", "2", "--json")
    # meanwhile the orphaned local file was changed by something else (two revisions ahead)
    local = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    data = json.loads(local.read_text())
    local.write_text(json.dumps({**data, "lesson": data["lesson"] + " always",
                                 "revision": data.get("revision", 0) + 2}) + "\n")
    out = run(roster_file, "unlink", "--json")
    assert out["conflicted"] == 1 and out["merged"] == 0
    assert out["conflicts"][0]["id"] == entry_id
    kept = run(roster_file, "show", entry_id, "--json")
    assert kept["lesson"].endswith(" always")
    saved = [json.loads(line) for line in Path(out["conflicts_file"]).read_text().splitlines()]
    assert [r["entry"]["confidence"] for r in saved] == [pytest.approx(0.7)]


def test_an_evergreen_entry_survives_ten_sweeps_past_its_ttl(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis,
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url,
                          knowledge={"default_max_phases": 2, "hive_enabled": False})
    evergreen = run(roster, "add", "Run the python test suite before pushing to main",
                    "--confidence", "0.95", "--json")["id"]
    plain = run(roster, "add", "Pin the redis server version in the compose file",
                "--confidence", "0.95", "--json")["id"]
    for _ in range(3):  # shown three times and applied each time: utility 1.0
        trace = run(roster, "inject", "python test suite pushing", "--json")
        assert [s["id"] for s in trace["shown"]][:1] == [evergreen]
        run(roster, "ack", f"KNOWLEDGE_APPLIED:{trace['trace_id']}:{evergreen}", "--json")
    assert run(roster, "audit", "--json")["tiers"][0]["evergreen"] == [evergreen]
    for phase in range(1, 14):  # TTL 2: archived on sweep 3; ten more sweeps after that
        swept = run(roster, "sweep", "--phase", str(phase), "--json")
        assert swept["evergreen"] == 1
        if phase == 3:
            assert swept["archived"] == 1
    assert run(roster, "show", plain, "--json")["status"] == "archived"
    kept = run(roster, "show", evergreen, "--json")
    assert kept["status"] == "candidate" and kept.get("phases_alive", 0) == 0
