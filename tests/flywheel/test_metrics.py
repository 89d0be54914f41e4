"""Flywheel metrics on a constructed history whose answers are known."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swarmq.flywheel._signals import (
    GoldenSignals,
    citation_pipeline,
    gini,
    overall_verdict,
    reuse_concentration,
    slope,
    top10_bottom_ratio,
    velocity_trend,
)
from swarmq.flywheel.citations import citation_event
from swarmq.flywheel.metrics import (
    compute_metrics,
    escape_status,
    is_evidence,
    read_baselines,
    write_baseline,
)
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks

NOW = datetime(2026, 4, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return NOW - timedelta(days=n)


def learning(path: Path, age_days: int, utility: float, extra: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nid: {path.stem}\ndate: {day(age_days):%Y-%m-%d}\nutility: {utility}\n---\n\n"
        f"# {path.stem}\n\n## What We Learned\n\n{path.stem} {extra}\n"
    )


@pytest.fixture
def history(tmp_path: Path) -> AgentsLayout:
    layout = AgentsLayout(tmp_path / "repo" / ".agents")
    # δ: learnings 5, 10, 20, 25 days old → 15 days (patterns are not part of δ)
    learning(layout.learnings / "a.md", 5, 0.8, "see .agents/research/r1.md")
    learning(layout.learnings / "b.md", 10, 0.6)
    learning(layout.learnings / "c.md", 20, 0.2)
    learning(layout.learnings / "d.md", 25, 0.5)
    learning(layout.patterns / "p.md", 100, 0.9)
    cites = [
        citation_event(".agents/learnings/a.md", "s1", "retrieved", when=day(1)),
        citation_event(str(layout.learnings / "a.md"), "s2", "retrieved", when=day(2)),
        citation_event(".agents/learnings/b.md", "s3", "helpful", when=day(3)),
        citation_event(".agents/patterns/p.md", "s4", "retrieved", when=day(4)),
        citation_event(
            ".agents/learnings/c.md", "s0", "applied", when=day(30)
        ),  # outside the 7-day window
        citation_event(".agents/pool/pending/cand-1.json", "s5", "retrieved", when=day(1)),
    ]
    layout.citations.parent.mkdir(parents=True, exist_ok=True)
    layout.citations.write_text("".join(json.dumps(c) + "\n" for c in cites) + "{torn\n")
    feedback = [(1.0, 0.5, 0.55), (1.0, 0.55, 0.595), (0.0, 0.5, 0.45), (1.0, 0.5, 0.55)]
    lines = [
        {
            "recorded_at": (day(2) if i < 3 else day(20)).isoformat(),
            "reward": r,
            "utility_before": b,
            "utility_after": a,
        }
        for i, (r, b, a) in enumerate(feedback)
    ]
    layout.feedback.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (layout.research).mkdir(parents=True)
    (layout.research / "r1.md").write_text("mined")
    (layout.research / "r2.md").write_text("orphan")
    layout.metrics.mkdir(parents=True)
    for age, velocity in ((5, 0.02), (3, 0.06), (1, 0.10)):
        (layout.metrics / f"baseline-{day(age):%Y-%m-%d}.json").write_text(
            json.dumps({"timestamp": day(age).isoformat(), "velocity": velocity})
        )
    return layout


def test_known_answers(history: AgentsLayout) -> None:
    m = compute_metrics(history, now=NOW, days=7)
    assert m["delta"] == pytest.approx(15.0)
    # σ: a, b, p cited in the window out of 5 retrievable; ρ: only b has evidence (helpful)
    assert m["sigma"] == pytest.approx(3 / 5)
    assert m["rho"] == pytest.approx(1 / 3)
    assert m["sigma_rho"] == pytest.approx(0.2)
    assert m["escape_threshold"] == pytest.approx(0.15)
    assert m["velocity"] == pytest.approx(0.05) and m["above_escape_velocity"]
    assert m["status"] == "COMPOUNDING"
    assert m["citations_this_period"] == 5 and m["unique_cited_artifacts"] == 4
    assert m["corrupt_citation_lines"] == 1
    assert m["tier_counts"]["learning"] == 4 and m["tier_counts"]["pattern"] == 1
    assert m["new_artifacts"] == 1 and m["learnings_created"] == 1  # a.md is 5 days old
    assert m["learnings_found"] == 3 and m["loop_closure_ratio"] == pytest.approx(3.0)
    assert m["stale_artifacts"] == 0  # p.md is 100 days old but was cited 4 days ago
    assert m["mean_utility"] == pytest.approx(0.6)
    assert (m["high_utility_count"], m["low_utility_count"]) == (2, 1)
    gs = m["golden_signals"]
    # velocity rose 0.02 per day (slope −0.02 per day of age, negated)
    assert gs["velocity_trend_7d"] == pytest.approx(0.02) and gs["trend_verdict"] == "compounding"
    # 3 feedback lines in the window, 2 with reward > 0.6; deltas sorted −0.05, 0.045, 0.05
    assert gs["high_utility_citation_pct"] == pytest.approx(200 / 3)
    assert gs["median_utility_delta"] == pytest.approx(0.045)
    assert gs["pipeline_verdict"] == "reinforcing"
    assert gs["applied_to_retrieved_ratio"] == pytest.approx(1 / 5)  # 1 helpful vs 4 retrieved
    assert (gs["orphaned_research_count"], gs["orphaned_research_pct"], gs["closure_verdict"]) == (
        1,
        50.0,
        "unmined",
    )
    # learning citations by name in the window: a 2, b 1, c 0, d 0 → Gini 7/12, half active
    assert gs["citation_gini"] == pytest.approx(7 / 12) and gs["active_pool_pct"] == 50.0
    assert gs["concentration_verdict"] == "concentrated"
    assert gs["overall_verdict"] == "accumulating" and m["health"] == "ACCUMULATING"


def test_baselines_round_trip(history: AgentsLayout, tmp_path: Path) -> None:
    m = compute_metrics(history, now=NOW)
    path = write_baseline(history, LocalLocks(tmp_path / "locks"), m)
    assert path.name == "baseline-2026-04-01.json"
    assert [b["velocity"] for b in read_baselines(history)] == [
        0.02,
        0.06,
        0.10,
        pytest.approx(0.05),
    ]


def test_empty_project() -> None:
    m = compute_metrics(AgentsLayout(Path("/nonexistent/.agents")), now=NOW)
    assert (m["sigma"], m["rho"], m["delta"], m["velocity"]) == (0.0, 0.0, 0.0, 0.0)
    assert m["status"] == "NO DATA" and m["golden_signals"]["overall_verdict"] == "accumulating"


def test_signal_functions() -> None:
    assert gini([1, 1, 1, 1]) == 0.0 and gini([]) == 0.0 and gini([0, 0]) == 0.0
    assert gini([0, 0, 0, 10]) == pytest.approx(0.75)
    assert slope([0, 1, 2], [1, 3, 5]) == pytest.approx(2.0) and slope([1, 1], [0, 5]) == 0.0
    assert top10_bottom_ratio([1.0] * 9 + [9.0]) == pytest.approx(1.0)
    assert top10_bottom_ratio([0.0] * 9 + [3.0]) == 999.0
    assert velocity_trend([(1, 0.1), (2, 0.1)]) == (0.0, 0.0, "stagnant")
    assert velocity_trend([(1, 0.0), (2, 0.1), (3, 0.2)])[2] == "decaying"
    assert citation_pipeline([], 0, 0)[3] == "insufficient-data"
    assert citation_pipeline([(0.0, -0.05)] * 3, 0, 1)[3] == "degrading"
    assert reuse_concentration([5.0] + [0.0] * 9)[3] == "dormant"
    assert reuse_concentration([1.0, 1.0, 1.0, 0.0])[3] == "distributed"
    assert (
        overall_verdict(
            GoldenSignals(
                trend_verdict="compounding",
                pipeline_verdict="reinforcing",
                closure_verdict="mining",
            )
        )
        == "compounding"
    )
    assert (
        escape_status(False, -0.049) == "NEAR ESCAPE" and escape_status(False, -0.05) == "DECAYING"
    )
    assert (
        is_evidence("retrieved", 0.6)
        and not is_evidence("retrieved", 0.5)
        and not is_evidence("harmful", 0.9)
    )
    assert is_evidence("reference", 0.0) and not is_evidence("retrieved", 0.0)
