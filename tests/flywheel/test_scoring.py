"""Scoring, tier and gate arithmetic against worked examples from the reference."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swarmq.flywheel._pending import (
    candidate_id,
    file_date,
    parse_learning_blocks,
    session_hint,
    slugify,
)
from swarmq.flywheel._scoring import infer_type, rubric, score_block
from swarmq.flywheel.config import GateRules
from swarmq.flywheel.model import (
    BASE_SCORES,
    RUBRIC_WEIGHTS,
    PoolStatus,
    QualityTier,
    assign_tier,
    base_score,
    parse_time,
    tier_config,
    update_utility,
)
from swarmq.flywheel.pool import PoolEntry
from swarmq.flywheel.promotion import promotion_gate

CLAI_BLOCK = """# Learning: Use atomic renames for pools

**ID**: L1
**Category**: architecture
**Confidence**: high

## What We Learned

Write to a temp file and `os.replace` it.

## Why It Matters

A crash never leaves a torn file.

## Source

Session: ag-abc123"""


def test_constants_are_the_reference_numbers() -> None:
    assert dict(BASE_SCORES) == {
        "decision": 0.8,
        "solution": 0.9,
        "learning": 0.7,
        "failure": 0.75,
        "reference": 0.5,
    }
    assert base_score("gossip") == 0.5
    assert RUBRIC_WEIGHTS == {
        "specificity": 0.30,
        "actionability": 0.25,
        "novelty": 0.20,
        "context": 0.15,
        "confidence": 0.10,
    }
    assert abs(sum(RUBRIC_WEIGHTS.values()) - 1.0) <= 0.01
    assert [
        (t.confidence, t.human_gate, t.gate_sample_rate) for t in map(tier_config, QualityTier)
    ] == [(0.95, False, 0.0), (0.80, False, 0.0), (0.60, True, 0.05), (0.0, False, 0.0)]


@pytest.mark.parametrize(
    ("score", "tier"),
    [
        (1.0, QualityTier.GOLD),
        (0.85, QualityTier.GOLD),
        (0.8499, QualityTier.SILVER),
        (0.70, QualityTier.SILVER),
        (0.6999, QualityTier.BRONZE),
        (0.50, QualityTier.BRONZE),
        (0.4999, QualityTier.DISCARD),
        (0.0, QualityTier.DISCARD),
        (-0.2, QualityTier.DISCARD),
        (1.5, QualityTier.DISCARD),
    ],
)
def test_tier_intervals_are_half_open(score: float, tier: QualityTier) -> None:
    assert assign_tier(score) is tier


def test_worked_example_clai_style_block() -> None:
    """Category 'architecture' is no type, one decision keyword is not two: a learning.

    specificity 0.4 + backtick 0.2 + digit ('L1') 0.2 = 0.8; actionability 0.4 + 'Use' 0.2 = 0.6;
    novelty 0.5 − 0.1 (under 250 bytes) = 0.4; context 0.5 + source 0.2 + why 0.1 = 0.8;
    confidence 'high' = 0.9. Weighted 0.24 + 0.15 + 0.08 + 0.12 + 0.09 = 0.68;
    raw = (0.7 + 0.68) / 2 + 0.15 = 0.84: silver, one hundredth below gold.
    """
    block = parse_learning_blocks(CLAI_BLOCK)[0]
    assert (block.title, block.id, block.category, block.confidence) == (
        "Use atomic renames for pools",
        "L1",
        "architecture",
        "high",
    )
    ktype = infer_type(block.category, block.body)
    assert ktype == "learning"
    parts = rubric(block.body, block.confidence)
    assert len(block.body.encode()) < 250
    assert parts.as_dict() == pytest.approx(
        {
            "specificity": 0.8,
            "actionability": 0.6,
            "novelty": 0.4,
            "context": 0.8,
            "confidence": 0.9,
        }
    )
    score = score_block(ktype, block.body, block.confidence)
    assert score.raw == pytest.approx(0.84)
    assert score.tier is QualityTier.SILVER and not score.gate_required


def test_worked_example_decision_medium_and_low() -> None:
    body = (
        "# Learning: broker\n\n**Category**: decision\n\nWe keep Redis as the broker.\n\n"
        "## Source\n\nsession notes"
    )
    # spec 0.4 ; act 0.4 ; nov 0.4 ; ctx 0.7 ; conf(medium) 0.7 → 0.12+0.10+0.08+0.105+0.07 = 0.475
    medium = score_block("decision", body, "medium")
    assert medium.raw == pytest.approx((0.8 + 0.475) / 2 + 0.07)  # 0.7075: silver
    assert medium.tier is QualityTier.SILVER
    low = score_block("decision", body, "low")  # conf 0.5 → 0.455; (0.8 + 0.455) / 2 = 0.6275
    assert low.raw == pytest.approx(0.6275) and low.tier is QualityTier.BRONZE and low.gate_required
    assert score_block("reference", "x", "").tier is QualityTier.DISCARD  # (0.5 + 0.375)/2 = 0.4375


@pytest.mark.parametrize(
    ("category", "body", "expected"),
    [
        ("Pattern", "", "decision"),
        ("postmortem", "", "failure"),
        ("workaround", "", "solution"),
        ("doc", "", "reference"),
        ("", "We decided: always use UTC", "decision"),
        ("", "It failed; root cause was DST", "failure"),
        ("", "always check", "learning"),
    ],
)
def test_type_inference(category: str, body: str, expected: str) -> None:
    assert infer_type(category, body) == expected


def test_candidate_ids_and_file_dates(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-28-retro.md"
    block = parse_learning_blocks(CLAI_BLOCK)[0]
    hint = session_hint(CLAI_BLOCK, path)
    assert hint == "ag-abc123"
    assert candidate_id(path, hint, block) == "pend-2026-01-28-retro-ag-abc123-l1"
    # No session token: the hint is the file base, named once (as current AgentOps does), so a
    # promoted learning is not called <day>-pend-<base>-<base>-<id>.md.
    forged = tmp_path / "2026-12-01-forge-6ba34ee83a.md"
    assert candidate_id(forged, forged.stem, block) == "pend-2026-12-01-forge-6ba34ee83a-l1"
    again = tmp_path / "pend-2026-12-01-forge-6ba34ee83a-l1.md"
    assert candidate_id(again, again.stem, block) == "pend-2026-12-01-forge-6ba34ee83a-l1"
    long_path = tmp_path / ("x" * 130 + ".md")
    long_id = candidate_id(long_path, long_path.stem, block)
    assert len(long_id) <= 120 and long_id.startswith("pend-" + "x" * 85)
    assert slugify("  Héllo, World!! ") == "h-llo-world" and slugify("!!!") == "cand"
    assert file_date("---\ndate: 2026-02-03\n---\n", path) == datetime(2026, 2, 3, tzinfo=UTC)
    assert file_date("**Date**: 2026-02-04\n", path) == datetime(2026, 2, 4, tzinfo=UTC)
    assert file_date("nothing", path) == datetime(2026, 1, 28, tzinfo=UTC)
    assert file_date(
        "---\nforged_at: 2026-02-05T10:11:12.5Z\ndate: 2026-02-05\n---\n", path
    ) == datetime(2026, 2, 5, 10, 11, 12, 500000, tzinfo=UTC)


def test_go_times_parse() -> None:
    assert parse_time("2026-01-29T16:55:20.012925123+01:00") == datetime(
        2026, 1, 29, 15, 55, 20, 12925, tzinfo=UTC
    )
    assert parse_time("0001-01-01T00:00:00Z") is None and parse_time("soon") is None


def entry(tier: str, hours: float, status: PoolStatus = PoolStatus.PENDING) -> PoolEntry:
    added = datetime(2026, 3, 1, tzinfo=UTC)
    data = {"candidate": {"id": "c1", "tier": tier}, "added_at": added.isoformat()}
    return PoolEntry(data, status, Path("/nowhere/c1.json")), added + timedelta(hours=hours)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("tier", "hours", "citations", "passed", "why"),
    [
        ("gold", 25, 1, True, "gold auto-promotes"),
        ("silver", 25, 1, True, "silver auto-promotes"),
        ("gold", 24, 5, False, "age 24.0 h is not over 24 h"),
        ("gold", 48, 0, False, "cited 0 times; needs 1"),
        ("bronze", 48, 2, False, "bronze cited 2 times; needs 3"),
        ("bronze", 48, 3, True, "bronze with 3 citations"),
        ("discard", 480, 10, False, "tier discard never graduates"),
    ],
)
def test_promotion_gates(tier: str, hours: float, citations: int, passed: bool, why: str) -> None:
    candidate, now = entry(tier, hours)  # type: ignore[misc]
    decision = promotion_gate(candidate, citations, now)
    assert (decision.passed, decision.reason) == (passed, why)


def test_gate_rules_are_configurable_and_rejected_never_passes() -> None:
    candidate, now = entry("bronze", 2)  # type: ignore[misc]
    assert promotion_gate(candidate, 1, now, GateRules(1.0, 1, 1)).passed
    rejected, now = entry("gold", 100, PoolStatus.REJECTED)  # type: ignore[misc]
    assert promotion_gate(rejected, 9, now).reason == "rejected"


def test_utility_ema() -> None:
    values = [0.5]
    for reward in (1, 1, 1, 0):
        values.append(update_utility(values[-1], reward))
    assert values == pytest.approx([0.5, 0.55, 0.595, 0.6355, 0.57195])
