"""The replay catches a recurring missing-path probe at the failure through the first session's
probe observation (the shape of eval/replay/histories-h13's misses), on real files: shown at
the later session's failing call, and nowhere before it."""

from __future__ import annotations

import json
from pathlib import Path

from swarmq.eval.replay import replay_project
from swarmq.eval.replay_labels import load_labels
from tests.forge.test_probe_observations import VITE, codex_session

FIRST = "rollout-2025-11-23T09-11-44-first"
SECOND = "rollout-2025-11-24T20-33-18-second"
LABELS = f"""\
version: 3
projects:
  - id: web
    split: held-apart
    format: codex-rollout
    sessions: [{FIRST}.jsonl, {SECOND}.jsonl]
    mistakes:
      - id: vite-config-js
        what: the Vite config is apps/web/vite.config.mjs, not vite.config.js.
        match: [["vite.config.js"], ["vite.config.mjs"]]
        cure: [["vite.config.mjs"]]
        first: {{session: {FIRST}.jsonl, line: 4}}
        recurrences:
          - {{session: {SECOND}.jsonl, line: 4}}
"""


def _later(path: Path) -> Path:
    """The second session: a day later, the same wrong read, under another program."""
    codex_session(
        path,
        "sess-second",
        [
            (
                "cat apps/web/vite.config.js",
                "cat: apps/web/vite.config.js: No such file or directory\n",
                1,
            )
        ],
    )
    lines = path.read_text().splitlines()
    moved = [line.replace("2025-11-23T09:", "2025-11-24T20:") for line in lines]
    path.write_text("\n".join(moved) + "\n", encoding="utf-8")
    return path


def test_a_recurring_missing_path_is_caught_at_the_failure(tmp_path: Path) -> None:
    project_dir = tmp_path / "history" / "web"
    project_dir.mkdir(parents=True)
    codex_session(project_dir / f"{FIRST}.jsonl", "sess-first", VITE)
    _later(project_dir / f"{SECOND}.jsonl")
    labels = tmp_path / "labels.yaml"
    labels.write_text(LABELS, encoding="utf-8")
    (project,) = load_labels(labels).projects
    figures = replay_project(tmp_path / "history", project, tmp_path / "work")
    (outcome,) = figures.recurrences
    assert (outcome.status, outcome.cured) == ("failure", "failure")
    assert outcome.entry_text is not None and "apps/web/vite.config.mjs" in outcome.entry_text
    second = figures.sessions[1]
    kinds = {
        log.kind for log in second.injections if any(s.tier == "observation" for s in log.shown)
    }
    assert kinds == {"recall_error"}  # at the failing call only, never before the session
    assert figures.sessions[0].shown() == {}  # the first session had nothing to be shown
    probes = tmp_path / "work" / "project" / ".agents" / "ao" / "probes.jsonl"
    assert [json.loads(line)["found"] for line in probes.read_text().splitlines()] == [
        "apps/web/vite.config.mjs"
    ]
