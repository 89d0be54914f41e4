"""Generalisation reports of ``swarmq eval forge``: by repository, the threshold sweep with each
repository left out, and the comparison with a saved run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.eval.forge import LabelsError, evaluate, load_labels
from swarmq.eval.forge_repos import compare, sweep
from swarmq.eval.metrics import Counts
from tests.eval.test_forge_eval import write_labels
from tests.forge.sessions import ClaudeSession

LABELS = """
sessions:
  - file: a.jsonl
    format: claude-code
    repo: alice/app
    split: tune
    lessons:
      - lesson: python is missing; use python3.
        words: [python3]
  - file: b.jsonl
    format: claude-code
    repo: bob/tool
    split: tune
    none: true
  - file: c.jsonl
    format: claude-code
    repo: bob/tool
    split: tune
    lessons:
      - lesson: The queue is Redis because the team runs it already.
        words: [redis]
"""


def sessions() -> dict[str, ClaudeSession]:
    a = (
        ClaudeSession("a")
        .user("migrate")
        .bash("python migrate.py", "Exit code 127\npython: command not found", error=True)
        .bash("python3 migrate.py", "done")
    )
    b = ClaudeSession("b").user(  # the user's: the agent's own prose would need to state a limit
        "We decided to store sessions in Postgres because the team knows it well."
    )
    c = ClaudeSession("c").user(
        "Decision: keep Redis as the queue, because the team runs it already."
    )
    return {"a.jsonl": a, "b.jsonl": b, "c.jsonl": c}


def test_counts_by_repository_add_up(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    assert [s.repo for s in load_labels(labels)] == ["alice/app", "bob/tool", "bob/tool"]
    result = evaluate(labels, split="tune")
    by_repo = result.by_repo()
    assert by_repo == {"alice/app": Counts(1, 0, 0), "bob/tool": Counts(1, 1, 0)}
    assert sum(by_repo.values(), Counts()) == result.overall
    assert result.as_dict()["by_repo"]["bob/tool"]["fp"] == 1


def test_the_sweep_chooses_each_threshold_without_the_repository_it_scores(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    swept = sweep(labels, split="tune", thresholds=(0.6, 0.99))
    assert [t for t, _ in swept.points] == [0.6, 0.99]
    assert swept.points[1][1].overall.tp == 0  # nothing reaches 0.99
    folds = {f.repo: f for f in swept.folds}
    # without alice, bob's sessions decide: at 0.6 F1 0.67, at 0.99 nothing: 0.6 it is
    assert folds["alice/app"].chosen == 0.6 and folds["alice/app"].counts == Counts(1, 0, 0)
    assert swept.left_out == sum((f.counts for f in swept.folds), Counts())
    assert swept.as_dict()["left_out"]["tp"] == 2


def test_a_saved_run_is_compared_repository_by_repository(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    now = evaluate(labels, split="tune")
    before = {
        "by_repo": {
            "alice/app": {"tp": 0, "fp": 0, "fn": 1},
            "bob/tool": {"tp": 1, "fp": 0, "fn": 0},
            "carol/gone": {"tp": 1, "fp": 1, "fn": 0},
        }
    }
    verdicts = {c.repo: c.verdict for c in compare(before, now)}
    assert verdicts == {"alice/app": "better", "bob/tool": "worse", "carol/gone": "mixed"}
    with pytest.raises(LabelsError, match="by_repo"):
        compare({"overall": {}}, now)


def test_a_bad_repo_is_named(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS.replace("repo: alice/app", "repo: 7"), sessions())
    with pytest.raises(LabelsError, match=r"sessions\[0\].*repo"):
        load_labels(labels)


def test_the_command_prints_the_generalisation_reports(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    runner = CliRunner()
    saved = runner.invoke(
        app, ["eval", "forge", "--labels", str(labels), "--split", "tune", "--json"]
    )
    assert saved.exit_code == 0, saved.output
    baseline = tmp_path / "before.json"
    baseline.write_text(saved.output, encoding="utf-8")
    shown = runner.invoke(
        app,
        [
            "eval",
            "forge",
            "--labels",
            str(labels),
            "--split",
            "tune",
            "--by-repo",
            "--sweep",
            "--baseline",
            str(baseline),
        ],
    )
    assert shown.exit_code == 0, shown.output
    assert "alice/app" in shown.output and "left out" in shown.output and "same" in shown.output
    as_json = runner.invoke(
        app,
        [
            "eval",
            "forge",
            "--labels",
            str(labels),
            "--split",
            "tune",
            "--sweep",
            "--baseline",
            str(baseline),
            "--json",
        ],
    )
    data = json.loads(as_json.output)
    assert (
        data["changes"] == {"alice/app": "same", "bob/tool": "same"} and "left_out" in data["sweep"]
    )
    broken = tmp_path / "broken.json"
    broken.write_text("[1, 2]", encoding="utf-8")
    bad = runner.invoke(
        app,
        ["eval", "forge", "--labels", str(labels), "--split", "tune", "--baseline", str(broken)],
    )
    assert bad.exit_code == 1 and "baseline" in bad.output


def test_every_committed_session_names_its_repository() -> None:
    labelled = load_labels(Path(__file__).resolve().parents[2] / "eval" / "forge" / "labels.yaml")
    assert all("/" in s.repo for s in labelled)
    assert len({s.repo for s in labelled if s.split == "tune"}) >= 8
