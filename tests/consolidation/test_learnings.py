"""AgentOps learnings and patterns: content-hash and near duplicates, merge arithmetic."""

from __future__ import annotations

from pathlib import Path

from swarmq.consolidation._learnings import consolidate_learnings
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.flywheel.artifacts import read_learning
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks
from tests.consolidation.support import learning_md

BODY = "Retry the flaky playwright login test once with a fresh browser context before failing the build"


def _store(root: Path) -> AgentsLayout:
    layout = AgentsLayout(root / ".agents")
    layout.learnings.mkdir(parents=True)
    layout.patterns.mkdir(parents=True)
    return layout


def _run(layout: AgentsLayout, root: Path, **kw: object):  # type: ignore[no-untyped-def]
    return consolidate_learnings(
        layout, LocalLocks(root / "locks"), ConsolidationConfig(), scope="learnings", **kw
    )


def test_exact_and_near_duplicates_merge(tmp_path: Path) -> None:
    layout = _store(tmp_path)
    (layout.learnings / "2026-01-01-l1.md").write_text(
        learning_md("l1", BODY, rewards=4, helpful=3, utility=0.7, maturity="candidate")
    )
    (layout.learnings / "2026-01-05-l2.md").write_text(
        learning_md(
            "l2", "  " + BODY.upper() + "  ", date="2026-01-05", rewards=1, harmful=1, utility=0.4
        )
    )
    (layout.patterns / "2026-01-06-p9.md").write_text(
        learning_md("p9", BODY + " quickly", date="2026-01-06", confidence=0.95)
    )
    (layout.learnings / "2026-01-07-other.md").write_text(
        learning_md("other", "Keep one schema module")
    )

    dry = _run(layout, tmp_path, dry_run=True)
    assert dry.plan.counts()["exact_duplicate"] == 1 and dry.plan.counts()["duplicate"] == 1
    assert not (layout.root / "archive").exists()

    report = _run(layout, tmp_path)
    assert report.plan.counts() == dry.plan.counts()
    survivor = read_learning(layout.learnings / "2026-01-01-l1.md")
    assert survivor is not None
    assert survivor.count("reward_count") == 5
    assert survivor.count("helpful_count") == 3 and survivor.count("harmful_count") == 1
    assert survivor.confidence == 0.95
    assert survivor.fields["supersedes"] == ["l2", "p9"] or survivor.fields["supersedes"] == [
        "p9",
        "l2",
    ]
    assert BODY in survivor.text  # the body is never rewritten
    archived = sorted(p.name for p in layout.archive.iterdir())
    assert archived == ["2026-01-05-l2.md", "2026-01-06-p9.md"]
    gone = read_learning(layout.archive / "2026-01-05-l2.md")
    assert gone is not None
    assert gone.fields["superseded_by"] == "l1" and gone.fields["is_current"] is False
    assert gone.fields["supersede_reason"] == "exact_duplicate"
    assert (layout.learnings / "2026-01-07-other.md").exists()

    snapshot = {p: p.read_text() for p in layout.root.rglob("*") if p.is_file()}
    again = _run(layout, tmp_path)
    assert not again.plan.changes
    assert {p: p.read_text() for p in layout.root.rglob("*") if p.is_file()} == snapshot


def test_missing_store_is_empty(tmp_path: Path) -> None:
    report = _run(AgentsLayout(tmp_path / ".agents"), tmp_path)
    assert report.entries == 0 and not report.plan.changes
