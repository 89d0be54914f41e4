"""``swarmq learn``: a person's lesson is stored with its recorder, recalled at its failure,
injected for a related task at once, refused with its rule when invalid, and counted apart."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_implicit_project import swarmq

LESSON = (
    "Run python3, not python: this machine has no python binary on PATH, so python commands fail."
)
FAILURE = "$ python manage.py test\nzsh: command not found: python"


def test_a_learned_lesson_is_recorded_recalled_injected_and_counted(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "shop"
    (project / ".swarm").mkdir(parents=True)
    added = swarmq(project, home, "learn", LESSON, "--evidence", FAILURE, "--json")
    assert added.returncode == 0, added.stderr
    outcome = json.loads(added.stdout)
    assert outcome["outcome"] == "added"

    lines = (project / ".swarm" / "knowledge.jsonl").read_text().splitlines()
    [entry] = [json.loads(line) for line in lines]
    assert entry["id"] == outcome["id"]
    assert entry["recorded_by"]["kind"] == "person" and entry["recorded_by"]["via"] == "cli"
    assert entry["auto_generated"] is False
    assert entry["evidence"] == FAILURE
    assert entry["failure_signature"] == "python: command not found"

    recalled = swarmq(project, home, "knowledge", "recall", "--error", FAILURE, "--json")
    assert recalled.returncode == 0, recalled.stderr
    assert [hit["id"] for hit in json.loads(recalled.stdout)["shown"]] == [entry["id"]]

    injected = swarmq(
        project, home, "knowledge", "inject", "--preview", "--json",
        "Run the python test suite for the billing module",
    )  # fmt: skip
    assert injected.returncode == 0, injected.stderr
    assert entry["id"] in injected.stdout

    status = swarmq(project, home, "flywheel", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["recorded_lessons"] == {"agent": 0, "person": 1}


def test_a_refused_lesson_names_its_rule_and_stores_nothing(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "shop"
    (project / ".swarm").mkdir(parents=True)
    refused = swarmq(project, home, "learn", "too short", "--json")
    assert refused.returncode == 1
    answer = json.loads(refused.stdout)
    assert answer["outcome"] == "rejected" and "too short" in answer["reason"]
    store = project / ".swarm" / "knowledge.jsonl"
    assert not store.exists() or store.read_text().strip() == ""
