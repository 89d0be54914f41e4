"""Maturity transitions exactly as referenced, decay, expiry and eviction on files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swarmq.flywheel._maturity import check_transition, decay_text, decayed_confidence
from swarmq.flywheel.artifacts import read_learning, updated_text
from swarmq.flywheel.closeloop import mature
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.model import MATURITY_TRANSITIONS, Maturity
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks

P, C, E, A = "provisional", "candidate", "established", "anti-pattern"


@pytest.mark.parametrize(
    ("old", "utility", "helpful", "harmful", "rewards", "new", "reason"),
    [
        # 1. any → anti-pattern
        (P, 0.20, 0, 3, 3, A, "utility 0.20 <= 0.20 and harmful_count 3 >= 3"),
        (E, 0.10, 9, 4, 20, A, "utility 0.10 <= 0.20 and harmful_count 4 >= 3"),
        (P, 0.20, 0, 2, 2, P, "not enough positive feedback for promotion"),
        # 2. provisional → candidate
        (P, 0.55, 3, 0, 3, C, "utility 0.55 >= 0.55 and reward_count 3 >= 3"),
        (P, 0.54, 9, 0, 9, P, "not enough positive feedback for promotion"),
        (P, 0.90, 2, 0, 2, P, "not enough positive feedback for promotion"),
        # 3. candidate → established / back to provisional
        (C, 0.60, 4, 1, 5, E, "utility 0.60 >= 0.55, reward_count 5 >= 5, helpful 4 vs harmful 1"),
        (C, 0.60, 1, 4, 5, C, "candidate criteria unchanged"),
        (
            C,
            0.60,
            1,
            4,
            10,
            E,
            "utility 0.60 >= 0.55, reward_count 10 >= 5, helpful 1 vs harmful 4",
        ),
        (C, 0.29, 0, 0, 1, P, "utility 0.29 < 0.30"),
        (C, 0.30, 0, 0, 1, C, "candidate criteria unchanged"),
        # 4. established → candidate
        (E, 0.49, 5, 1, 8, C, "utility 0.49 < 0.50"),
        (E, 0.50, 5, 1, 8, E, "established and still useful"),
        # 5. rehabilitation
        (
            A,
            0.60,
            7,
            3,
            10,
            P,
            "rehabilitation: utility 0.60 >= 0.60 and helpful 7 > 2 x harmful 3",
        ),
        (A, 0.60, 6, 3, 10, A, "anti-pattern criteria unchanged"),
        (A, 0.10, 9, 3, 12, A, "utility 0.10 <= 0.20 and harmful_count 3 >= 3"),
    ],
)
def test_transition_rules(
    old: str, utility: float, helpful: int, harmful: int, rewards: int, new: str, reason: str
) -> None:
    result = check_transition(old, utility, helpful, harmful, rewards)
    assert (result.new, result.reason) == (new, reason)
    assert result.transitioned == (new != old)
    if result.transitioned:
        assert Maturity(new) in MATURITY_TRANSITIONS[Maturity(old)]


def test_unknown_maturity_is_left_alone() -> None:
    assert not check_transition("accepted", 0.9, 9, 0, 9).transitioned


def test_reading_applies_the_scanner_defaults(tmp_path: Path) -> None:
    hand = tmp_path / "hand.md"
    hand.write_text(
        "---\nid: L7\ntype: learning\nconfidence: high\nmaturity: Provisional\nutility: 0.7\n---\n\n# T\n"
    )
    learning = read_learning(hand)
    assert learning is not None
    assert (learning.id, learning.maturity, learning.utility, learning.confidence) == (
        "L7",
        P,
        0.7,
        0.5,
    )
    bare = tmp_path / "bare.md"
    bare.write_text("# Learning: no front matter\n\n**Confidence**: high\n")
    plain = read_learning(bare)
    assert plain is not None and (plain.id, plain.maturity, plain.utility) == ("bare.md", P, 0.5)
    jsonl = tmp_path / "x.jsonl"
    jsonl.write_text(
        json.dumps({"id": "J1", "utility": 0.6, "reward_count": 3.9}) + "\nsecond line\n"
    )
    record = read_learning(jsonl)
    assert record is not None and record.count("reward_count") == 3


def test_updates_keep_everything_else(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    original = (
        "---\nid: L1\nmaturity: provisional\ncustom_key: keep me\n---\n\n# Title\n\nBody stays.\n"
    )
    path.write_text(original)
    learning = read_learning(path)
    assert learning is not None
    text = updated_text(learning, {"maturity": "candidate", "maturity_reason": "r"})
    assert (
        text
        == "---\nid: L1\nmaturity: candidate\ncustom_key: keep me\nmaturity_reason: r\n---\n\n# Title\n\nBody stays.\n"
    )
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text('{"z": 1, "id": "J"}\n{"second": true}\n')
    record = read_learning(jsonl)
    assert record is not None
    assert (
        updated_text(record, {"maturity": "candidate"})
        == '{"id":"J","maturity":"candidate","z":1}\n{"second": true}\n'
    )


def test_confidence_decay(tmp_path: Path) -> None:
    assert decayed_confidence(0.9, 2) == pytest.approx(0.9 * 0.8187307531)
    path = tmp_path / "d.md"
    path.write_text("---\nid: D\nconfidence: 0.9000\ndate: 2026-01-01\n---\n\n# D\n")
    learning = read_learning(path)
    assert learning is not None
    now = datetime(2026, 1, 15, tzinfo=UTC)  # two weeks after its date
    text = decay_text(learning, now)
    assert text is not None and "confidence: 0.7369" in text and "decay_count: 1" in text
    path.write_text(text)
    fresh = read_learning(path)
    assert fresh is not None and decay_text(fresh, now + timedelta(hours=3)) is None  # under a day


def write(path: Path, **fields: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    front = "\n".join(f"{k}: {v}" for k, v in fields.items())
    path.write_text(
        f"---\n{front}\n---\n\n# {path.stem}\n\n## What We Learned\n\n{path.stem} body\n"
    )
    return path


def test_mature_moves_files_through_the_lifecycle(tmp_path: Path) -> None:
    layout = AgentsLayout(tmp_path / ".agents")
    locks = LocalLocks(tmp_path / "locks")
    now = datetime(2026, 6, 1, tzinfo=UTC)
    recent = "2026-05-31T12:00:00Z"
    promote = write(
        layout.learnings / "up.md",
        id="up",
        utility=0.6,
        reward_count=3,
        helpful_count=3,
        last_decay_at=recent,
    )
    expired = write(
        layout.learnings / "old.md", id="old", valid_until="2026-05-01", last_decay_at=recent
    )
    evict = write(
        layout.learnings / "weak.md",
        id="weak",
        utility=0.1,
        confidence=0.1,
        harmful_count=1,
        last_decay_at=recent,
    )
    keep = write(
        layout.patterns / "est.md",
        id="est",
        utility=0.1,
        confidence=0.1,
        maturity="established",
        harmful_count=0,
        last_decay_at=recent,
    )
    result = mature(layout, locks, FlywheelConfig(), now=now)
    assert result.scanned == 4
    assert [(t["from"], t["to"]) for t in result.transitions] == [(P, C), (E, C)]
    assert not expired.exists() and (layout.archive / "old.md").exists()
    assert not evict.exists() and (layout.archive / "weak.md").exists()
    assert (
        "maturity: candidate" in promote.read_text()
        and "maturity_changed_at:" in promote.read_text()
    )
    assert keep.exists() and "maturity: candidate" in keep.read_text()  # demoted, not evicted
    assert result.decayed == 0  # every file had decayed within the day


def test_a_confidence_written_in_the_body_is_read_and_never_decayed(tmp_path: Path) -> None:
    from swarmq.flywheel._learning_fields import declared_confidence

    path = tmp_path / "2026-01-05-redis.md"
    text = (
        "---\nid: redis\ndate: 2026-01-05\nutility: 0.1\n---\n\n# Redis broker\n\n**Confidence**: medium\n\n"
        "## What We Learned\n\nKeep Redis as the broker.\n"
    )
    path.write_text(text, encoding="utf-8")
    learning = read_learning(path)
    assert learning is not None
    assert declared_confidence(learning) == (0.6, "medium")
    assert (
        decay_text(learning, datetime(2026, 6, 1, tzinfo=UTC)) is None
    )  # a word is kept, not decayed
    numeric = tmp_path / "n.md"
    numeric.write_text(
        "---\nid: n\ndate: 2026-01-05\n---\n\nConfidence: 0.8\n\nUse ruff.\n", encoding="utf-8"
    )
    learned = read_learning(numeric)
    assert learned is not None and declared_confidence(learned) == (0.8, None)
    decayed = decay_text(learned, datetime(2026, 3, 2, tzinfo=UTC))
    expected = round(
        decayed_confidence(0.8, 8.0), 4
    )  # decays from the declared 0.8, not the default 0.5
    assert decayed is not None and f"confidence: {expected}" in decayed


def test_a_learnings_age_is_the_date_it_states_not_the_files_mtime(tmp_path: Path) -> None:
    import os

    from swarmq.flywheel._learning_fields import learning_date

    named = tmp_path / "2025-11-02-fixture-isolation.md"
    named.write_text("# Fixture isolation\n\nGive each test its own tmp dir.\n", encoding="utf-8")
    in_body = tmp_path / "notes.md"
    in_body.write_text("# Notes\n\n**Date**: 2025-10-01\n\nPin the lock file.\n", encoding="utf-8")
    undated = tmp_path / "undated.md"
    undated.write_text("# Undated\n\nSomething.\n", encoding="utf-8")
    for path in (named, in_body, undated):
        os.utime(path, (1_900_000_000, 1_900_000_000))  # a fresh checkout: mtime is "now"
    dates = {
        p.name: learning_date(found)
        for p in (named, in_body, undated)
        if (found := read_learning(p)) is not None
    }
    assert dates[named.name] == datetime(2025, 11, 2, tzinfo=UTC)
    assert dates[in_body.name] == datetime(2025, 10, 1, tzinfo=UTC)
    assert dates[undated.name] == datetime.fromtimestamp(1_900_000_000, UTC)
