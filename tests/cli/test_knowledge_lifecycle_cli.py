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
    if args and args[0] == "add":  # plain prose, stored active (not held as unactionable)
        args = ("add", "--plain", *args[1:])
    result = CliRunner().invoke(app, ["-c", str(roster), "knowledge", *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args else result.output


def test_a_reinforce_made_under_a_link_survives_unlink(roster_file: Path, tmp_path: Path) -> None:
    entry_id = run(
        roster_file,
        "add",
        "Run the python test suite before pushing to main",
        "--phase",
        "1",
        "--json",
    )["id"]
    untouched = run(
        roster_file,
        "add",
        "Pin the redis server version in the CI compose file",
        "--phase",
        "1",
        "--json",
    )["id"]
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
    roster_file: Path,
    tmp_path: Path,
) -> None:
    entry_id = run(
        roster_file,
        "add",
        "Run the python test suite before pushing to main",
        "--phase",
        "1",
        "--json",
    )["id"]
    run(roster_file, "link", "team", "--json")
    run(roster_file, "reinforce", entry_id, "--phase", "2", "--json")
    # meanwhile the orphaned local file was changed by something else (two revisions ahead)
    local = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    data = json.loads(local.read_text())
    local.write_text(
        json.dumps(
            {**data, "lesson": data["lesson"] + " always", "revision": data.get("revision", 0) + 2}
        )
        + "\n"
    )
    out = run(roster_file, "unlink", "--json")
    assert out["conflicted"] == 1 and out["merged"] == 0
    assert out["conflicts"][0]["id"] == entry_id
    kept = run(roster_file, "show", entry_id, "--json")
    assert kept["lesson"].endswith(" always")
    saved = [json.loads(line) for line in Path(out["conflicts_file"]).read_text().splitlines()]
    assert [r["entry"]["confidence"] for r in saved] == [pytest.approx(0.7)]


def test_an_evergreen_entry_survives_ten_sweeps_past_its_ttl(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
) -> None:
    roster = write_roster(
        tmp_path, swarm_name, redis_url, knowledge={"default_max_phases": 2, "hive_enabled": False}
    )
    evergreen = run(
        roster,
        "add",
        "Run the python test suite before pushing to main",
        "--confidence",
        "0.95",
        "--json",
    )["id"]
    plain = run(
        roster,
        "add",
        "Pin the redis server version in the compose file",
        "--confidence",
        "0.95",
        "--json",
    )["id"]
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


LESSON = "Pin docker base images by digest in production"


def projects(tmp_path: Path, swarm_name: str, redis_url: str, *names: str) -> list[Path]:
    """One roster per project, all sharing one hive (the platform data dir)."""
    out = []
    for name in names:
        root = tmp_path / name
        out.append(
            write_roster(
                root,
                swarm_name,
                redis_url,
                knowledge={"project_name": name},
                paths={
                    "profiles": str(root / "profiles"),
                    "runtime": str(root / "runtime"),
                    "shared": str(root / "shared"),
                    "hive": str(tmp_path / "hive"),
                },
            )
        )
    return out


def hive_entry(roster: Path) -> dict[str, Any]:
    entries = run(roster, "list", "--tier", "hive", "--json")["entries"]
    assert len(entries) == 1
    return dict(entries[0])


def test_three_projects_confirm_a_hive_entry_with_the_reference_arithmetic(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
) -> None:
    alpha, beta, gamma = projects(tmp_path, swarm_name, redis_url, "alpha", "beta", "gamma")
    run(alpha, "add", LESSON, "--tag", "hive-fast-track", "--tag", "docker", "--json")
    promoted = run(alpha, "sweep", "--phase", "1", "--json")["hive"]
    assert (promoted["new_promotions"], promoted["encounters_incremented"]) == (1, 1)
    entry = hive_entry(alpha)  # new candidate 1.0, then its own project's encounter: + 0.1 × 1.0
    assert entry["encounter_score"] == pytest.approx(1.1) and entry["status"] == "candidate"
    assert [c["project_name"] for c in entry["confirmed_by"]] == ["alpha"]
    for roster in (beta, gamma):  # shown in both other projects: counted, not confirmed
        shown = run(roster, "inject", "docker production images", "--phase", "2", "--json")["shown"]
        assert [s["id"] for s in shown] == [entry["id"]]
    entry = hive_entry(alpha)
    assert entry["retrieval_outcomes"]["shown_count"] == 2
    assert entry["encounter_score"] == pytest.approx(1.1)
    assert [c["project_name"] for c in entry["confirmed_by"]] == ["alpha"]
    # each other project's near-duplicate lesson is a cross-project encounter: + 0.1 × 0.5
    run(beta, "add", LESSON + " builds", "--json")
    assert run(beta, "sweep", "--phase", "2", "--json")["hive"]["encounters_incremented"] == 1
    entry = hive_entry(beta)
    assert entry["encounter_score"] == pytest.approx(1.15) and entry["status"] == "candidate"
    run(gamma, "add", LESSON + " deploys", "--json")
    assert run(gamma, "sweep", "--phase", "2", "--json")["hive"]["advancements"] == 1
    entry = hive_entry(gamma)
    assert entry["encounter_score"] == pytest.approx(1.20) and entry["status"] == "established"
    assert [c["project_name"] for c in entry["confirmed_by"]] == ["alpha", "beta", "gamma"]
    # a project counts once, however it confirms again
    run(gamma, "sweep", "--phase", "3", "--json")
    assert (
        run(gamma, "reinforce", entry["id"], "--tier", "hive", "--json")["outcome"]
        == "already_confirmed_project"
    )
    assert hive_entry(gamma)["encounter_score"] == pytest.approx(1.20)


def test_an_applied_acknowledgement_or_explicit_confirmation_is_an_encounter(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
) -> None:
    alpha, beta, gamma = projects(tmp_path, swarm_name, redis_url, "alpha", "beta", "gamma")
    run(alpha, "add", LESSON, "--tag", "hive-fast-track", "--tag", "docker", "--json")
    run(alpha, "sweep", "--phase", "1", "--json")
    injected = run(beta, "inject", "docker production images", "--phase", "4", "--json")
    entry_id = injected["shown"][0]["id"]
    acks = run(beta, "ack", f"KNOWLEDGE_APPLIED:{injected['trace_id']}:{entry_id}", "--json")
    assert acks[0]["status"] == "committed"
    assert hive_entry(beta)["encounter_score"] == pytest.approx(1.15)
    confirmed = run(gamma, "reinforce", entry_id, "--tier", "hive", "--json")
    assert confirmed["outcome"] == "confirmed" and confirmed["status"] == "established"
    assert confirmed["encounter_score"] == pytest.approx(1.20)
    # beta's later near-duplicate earns nothing more: beta already confirmed it
    run(beta, "add", LESSON + " builds", "--json")
    assert run(beta, "sweep", "--phase", "5", "--json")["hive"]["encounters_incremented"] == 0
