"""A consolidation killed mid-run leaves each store as it was before or as it is after."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmq.consolidation._events import EventLog
from swarmq.consolidation._learnings import consolidate_learnings
from swarmq.consolidation._learnings import events_path as learnings_events
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import CRASH_ENV, consolidate_tier, events_path
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks
from tests.consolidation.support import entry, learning_md, open_store, write_store

ROOT = Path(__file__).resolve().parents[2]

KNOWLEDGE_SCRIPT = """
import sys
from pathlib import Path
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier
from tests.consolidation.support import open_store
consolidate_tier(open_store(Path(sys.argv[1])).swarm, ConsolidationConfig(), scope="swarm")
"""

LEARNINGS_SCRIPT = """
import sys
from pathlib import Path
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation._learnings import consolidate_learnings
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks
root = Path(sys.argv[1])
consolidate_learnings(AgentsLayout(root / ".agents"), LocalLocks(root / "locks"),
                      ConsolidationConfig(), scope="learnings")
"""


def _killed_run(script: str, root: Path, step: str) -> None:
    env = {**os.environ, CRASH_ENV: step, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 86, done.stderr.decode()


def _knowledge_fixture(root: Path) -> None:
    write_store(
        root,
        [
            entry(
                "a", "Pin the node version in the ci workflow before running the integration tests"
            ),
            entry(
                "b",
                "Pin the node version in the ci workflow before running the integration tests now",
                created="2026-01-03T00:00:00.000Z",
            ),
            entry(
                "c",
                "Pin the node version in the ci workflow before running the unit tests too",
                created="2026-01-04T00:00:00.000Z",
            ),
            entry("d", "Use sqlite in memory databases for fast repository unit tests"),
        ],
    )


def _reference_after(tmp: Path) -> bytes:
    """The store after an uninterrupted run, with the volatile fields made comparable."""
    _knowledge_fixture(tmp)
    store = open_store(tmp)
    consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    return _stable(store.swarm.files.knowledge.read_text())


def _stable(text: str) -> bytes:
    import json

    out = []
    for line in text.splitlines():
        data = json.loads(line)
        for key in ("updated_at", "superseded_at", "consolidation_run"):
            data.pop(key, None)
        out.append(json.dumps(data, sort_keys=True))
    return "\n".join(out).encode()


@pytest.mark.parametrize("step", ["journaled", "committed"])
def test_knowledge_crash_is_before_or_after(tmp_path: Path, step: str) -> None:
    root = tmp_path / "crash"
    _knowledge_fixture(root)
    knowledge = root / ".swarm" / "knowledge.jsonl"
    before = knowledge.read_bytes()
    _killed_run(KNOWLEDGE_SCRIPT, root, step)
    after_reference = _reference_after(tmp_path / "reference")
    now = knowledge.read_bytes()
    if step == "journaled":
        assert now == before
    else:
        assert _stable(now.decode()) == after_reference
    # The next run closes the open run from what the store shows, then finishes the job.
    store = open_store(root)
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert len(report.recovered) == 1
    log = EventLog(events_path(store.swarm.files))
    ends = [
        r["type"]
        for r in log.records(report.recovered[0])
        if r["type"].startswith("run_") and r.get("recovered")
    ]
    assert ends == (["run_aborted"] if step == "journaled" else ["run_committed"])
    assert _stable(knowledge.read_text()) == after_reference
    assert not log.open_runs()
    assert not consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm").plan.changes


def _learnings_fixture(root: Path) -> AgentsLayout:
    layout = AgentsLayout(root / ".agents")
    layout.learnings.mkdir(parents=True)
    layout.patterns.mkdir(parents=True)
    body = "Retry the flaky playwright login test once with a fresh browser context before failing the build"
    (layout.learnings / "2026-01-01-l1.md").write_text(
        learning_md("l1", body, rewards=2, helpful=1)
    )
    (layout.learnings / "2026-01-05-l2.md").write_text(
        learning_md(
            "l2", body.replace("Retry", "retry") + ".", date="2026-01-05", rewards=1, harmful=1
        )
    )
    (layout.learnings / "2026-01-06-l3.md").write_text(
        learning_md(
            "l3",
            "Retry the flaky playwright login test once with a fresh browser context before failing the job",
            date="2026-01-06",
        )
    )
    (layout.patterns / "2026-01-02-p1.md").write_text(
        learning_md("p1", "Keep the api schema in one module")
    )
    return layout


def _tree(layout: AgentsLayout) -> dict[str, str]:
    return {
        str(p.relative_to(layout.root)): p.read_text() for p in sorted(layout.root.rglob("*.md"))
    }


def test_learnings_crash_mid_apply_rolls_forward(tmp_path: Path) -> None:
    reference = _learnings_fixture(tmp_path / "reference")
    consolidate_learnings(
        reference,
        LocalLocks(tmp_path / "reference" / "locks"),
        ConsolidationConfig(),
        scope="learnings",
    )
    root = tmp_path / "crash"
    layout = _learnings_fixture(root)
    before = _tree(layout)
    _killed_run(LEARNINGS_SCRIPT, root, "partial")
    assert _tree(layout) != before  # killed between file writes
    report = consolidate_learnings(
        layout, LocalLocks(root / "locks"), ConsolidationConfig(), scope="learnings"
    )
    assert len(report.recovered) == 1 and not report.plan.changes

    def normal(tree: dict[str, str]) -> dict[str, list[str]]:
        return {
            k: [
                line
                for line in v.splitlines()
                if not line.startswith(("superseded_at:", "consolidation_run:", "supersedes:"))
            ]
            for k, v in tree.items()
        }

    got, want = normal(_tree(layout)), normal(_tree(reference))
    assert sorted(k.rsplit("-", 1)[0] for k in got) == sorted(k.rsplit("-", 1)[0] for k in want)
    assert not EventLog(learnings_events(layout)).open_runs()
