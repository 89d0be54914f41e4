"""Pool ingest, status moves, chain log, promotion with content-hash dedup, feedback."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swarmq.flywheel._feedback import apply_feedback
from swarmq.flywheel._ingest import ingest_pending
from swarmq.flywheel.citations import citation_event, record_citations
from swarmq.flywheel.content import canonical_content_body, content_hash
from swarmq.flywheel.model import PoolStatus
from swarmq.flywheel.pool import Pool, PoolError
from swarmq.flywheel.promoted import PromotedIndex
from swarmq.flywheel.promotion import promote
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks

PENDING = """---
date: 2026-03-01
---

# Learning: Keep Redis as the broker

**ID**: L1
**Category**: decision
**Confidence**: high

## What We Learned

We decided to keep Redis as the broker, because the quota gate already needs it.

## Source

Session: ag-x1y2

# Learning: Same body again

**ID**: L2
**Category**: decision
**Confidence**: high

## What We Learned

We decided to keep Redis as the broker,   because the QUOTA gate already needs it.

# Learning: Stub

**ID**: L3

No significant learnings from this session.

# Learning: weak

**ID**: L4
**Category**: reference

see x
"""


@pytest.fixture
def layout(tmp_path: Path) -> AgentsLayout:
    return AgentsLayout(tmp_path / "repo" / ".agents")


@pytest.fixture
def locks(tmp_path: Path) -> LocalLocks:
    return LocalLocks(tmp_path / "locks")


def chain(layout: AgentsLayout) -> list[dict[str, object]]:
    path = layout.pool / "chain.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_ingest_scores_tiers_and_moves_the_file(layout: AgentsLayout, locks: LocalLocks) -> None:
    layout.pending.mkdir(parents=True)
    source = layout.pending / "2026-03-01-retro.md"
    source.write_text(PENDING)
    result = ingest_pending(layout, locks)
    assert result.as_dict() == {
        "files_scanned": 1,
        "candidates_found": 4,
        "added": 3,
        "skipped_existing": 0,
        "skipped_malformed": 1,
        "skipped_promoted": 0,
        "errors": 0,
        "added_ids": [
            "pend-2026-03-01-retro-ag-x1y2-l1",
            "pend-2026-03-01-retro-ag-x1y2-l2",
            "pend-2026-03-01-retro-ag-x1y2-l4",
        ],
    }
    assert not source.exists() and (layout.processed / source.name).read_text() == PENDING
    pool = Pool(layout)
    first = pool.require("pend-2026-03-01-retro-ag-x1y2-l1")
    # spec 0.6 (digits) act 0.4 nov 0.4 ctx 0.7 conf 0.9 → 0.555; (0.8 + 0.555)/2 + 0.15 = 0.8275
    assert first.status is PoolStatus.PENDING and first.tier == "silver"
    assert first.raw_score == pytest.approx(0.8275)
    cand = first.candidate
    assert list(cand)[:8] == [
        "id",
        "type",
        "content",
        "source",
        "raw_score",
        "tier",
        "extracted_at",
        "metadata",
    ]
    assert cand["source"] == {
        "transcript_path": str(source),
        "message_index": 0,
        "timestamp": "2026-03-01T00:00:00.000000Z",
        "session_id": "ag-x1y2",
    }
    assert (cand["utility"], cand["maturity"], cand["confidence"], cand["last_reward_at"]) == (
        0.5,
        "provisional",
        0.80,
        "0001-01-01T00:00:00Z",
    )
    assert first.data["added_at"] == "2026-03-01T00:00:00.000000Z"
    assert list(first.data) == ["candidate", "scoring_result", "status", "added_at", "updated_at"]
    weak = pool.require("pend-2026-03-01-retro-ag-x1y2-l4")
    assert weak.tier == "discard" and "confidence" not in weak.candidate
    assert [e["operation"] for e in chain(layout)] == ["add", "add", "add"]
    # idempotent: the same file again adds nothing
    source.write_text(PENDING)
    again = ingest_pending(layout, locks)
    assert again.added == 0 and again.skipped_existing == 3
    assert (layout.processed / source.name).exists() and not any(
        layout.processed.glob("*-*-*-retro-*.md")
    )


def test_unreadable_files_stay_and_malformed_pool_entries_are_reported(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    layout.pending.mkdir(parents=True)
    bad = layout.pending / "bad.md"
    bad.write_bytes(b"\xff\xfe not utf-8")
    result = ingest_pending(layout, locks)
    assert result.errors == 1 and bad.exists() and "cannot read" in result.problems[0]
    (layout.pool / "pending").mkdir(parents=True)
    broken = layout.pool / "pending" / "broken.json"
    broken.write_text("{")
    pool = Pool(layout)
    assert list(pool.entries()) == [] and pool.problems and broken.exists()


def ingest_one(layout: AgentsLayout, locks: LocalLocks, text: str = PENDING) -> Pool:
    layout.pending.mkdir(parents=True, exist_ok=True)
    (layout.pending / "2026-03-01-retro.md").write_text(text)
    ingest_pending(layout, locks)
    return Pool(layout)


def test_status_moves_are_recorded(layout: AgentsLayout, locks: LocalLocks) -> None:
    pool = ingest_one(layout, locks)
    entry = pool.require("pend-2026-03-01-retro-ag-x1y2-l1")
    with pytest.raises(PoolError, match="not allowed"):
        pool.get("../etc/passwd")
    staged = pool.stage(entry, lease=None)
    assert staged.status is PoolStatus.STAGED and not entry.path.exists()
    assert pool.require(entry.id).status is PoolStatus.STAGED
    weak = pool.require("pend-2026-03-01-retro-ag-x1y2-l4")
    with pytest.raises(PoolError, match="below the minimum"):
        pool.stage(weak, lease=None)
    rejected = pool.reject(weak, "noise", reviewer="tester", lease=None)
    assert rejected.status is PoolStatus.REJECTED and rejected.human_review["notes"] == "noise"  # type: ignore[index]
    with pytest.raises(PoolError, match="cannot be staged"):
        pool.stage(rejected, lease=None)
    with pytest.raises(PoolError, match="at most 1000"):
        pool.reject(staged, "x" * 1001, lease=None)
    events = [(e["operation"], e.get("from_status"), e.get("to_status")) for e in chain(layout)][3:]
    assert events == [("stage", "pending", "staged"), ("reject", "pending", "rejected")]


def test_promotion_writes_the_artifact_and_dedups_by_content(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    pool = ingest_one(layout, locks)
    index = PromotedIndex(layout)
    now = datetime(2026, 3, 5, 12, tzinfo=UTC)
    first = pool.stage(pool.require("pend-2026-03-01-retro-ag-x1y2-l1"), lease=None)
    done = promote(pool, first, index, pool_lease=None, learnings_lease=None, now=now)
    path = Path(done.artifact_path)
    assert path == layout.patterns / "2026-03-05-pend-2026-03-01-retro-ag-x1y2-l1.md"
    text = path.read_text()
    assert text.startswith(
        "---\nid: pend-2026-03-01-retro-ag-x1y2-l1\ntype: decision\ndate: 2026-03-05\ntier: silver\n"
        "utility: 0.5000\nconfidence: 0.8000\nmaturity: provisional\nreward_count: 0\nhelpful_count: 0\n"
        "harmful_count: 0\nsource_session: ag-x1y2\n---\n\n# Decision: Keep Redis as the broker\n\n"
        "## What We Learned\n\nWe decided to keep Redis as the broker, because the quota gate already "
        "needs it.\n\n## Source\n\n- **Session**: ag-x1y2\n"
    )
    # the pending wrapper is gone: one heading, one What We Learned, one Source, no **ID** line
    assert [text.count(s) for s in ("\n# ", "## What We Learned", "## Source", "**ID**")] == [
        1,
        1,
        1,
        0,
    ]
    assert "- **Session**: ag-x1y2\n" in text and "- **Message**: 0\n" in text
    assert text.endswith(
        "- **Message**: 0\n\nSession: ag-x1y2\n\n"
    )  # the block's own source note kept
    assert (
        canonical_content_body(text)
        == "We decided to keep Redis as the broker, because the quota gate already needs it."
    )
    assert not first.path.exists()
    # L2 differs only in case and spacing: the same content hash, so no second artifact
    second = pool.stage(pool.require("pend-2026-03-01-retro-ag-x1y2-l2"), lease=None)
    dup = promote(
        pool, second, PromotedIndex(layout), pool_lease=None, learnings_lease=None, now=now
    )
    assert (
        dup.deduplicated
        and dup.artifact_path == str(path)
        and dup.reason == "dedup: content hash already promoted"
    )
    assert len(list(layout.patterns.iterdir())) == 1
    index_lines = (layout.pool / "promoted-index.jsonl").read_text().splitlines()
    assert len(index_lines) == 1 and json.loads(index_lines[0])["content_hash"] == content_hash(
        text
    )
    last = chain(layout)[-1]
    assert (last["operation"], last["to_status"], last["reason"]) == (
        "promote",
        "archived",
        dup.reason,
    )
    with pytest.raises(PoolError, match="only staged"):
        promote(
            pool,
            pool.require("pend-2026-03-01-retro-ag-x1y2-l4"),
            index,
            pool_lease=None,
            learnings_lease=None,
        )


def test_a_stale_index_still_cannot_duplicate(layout: AgentsLayout, locks: LocalLocks) -> None:
    """The artifact was written but the index line was lost (crash): the live scan catches it."""
    pool = ingest_one(layout, locks)
    first = pool.stage(pool.require("pend-2026-03-01-retro-ag-x1y2-l1"), lease=None)
    done = promote(pool, first, PromotedIndex(layout), pool_lease=None, learnings_lease=None)
    (layout.pool / "promoted-index.jsonl").unlink()
    second = pool.stage(pool.require("pend-2026-03-01-retro-ag-x1y2-l2"), lease=None)
    dup = promote(pool, second, PromotedIndex(layout), pool_lease=None, learnings_lease=None)
    assert dup.deduplicated and dup.artifact_path == done.artifact_path


def test_feedback_moves_utility_once_per_citation(layout: AgentsLayout, locks: LocalLocks) -> None:
    pool = ingest_one(layout, locks)
    now = datetime(2026, 3, 9, tzinfo=UTC)
    learning = layout.learnings / "2026-03-02-l.md"
    learning.parent.mkdir(parents=True)
    learning.write_text("---\nid: l\nutility: 0.5000\nreward_count: 0\n---\n\n# L\n")
    record_citations(
        layout,
        locks,
        [
            citation_event(".agents/learnings/2026-03-02-l.md", "s1", "helpful"),
            citation_event(str(learning), "s2", "used-in-final-artifact"),
            citation_event(".agents/learnings/2026-03-02-l.md", "s3", "retrieved"),
            citation_event(
                ".agents/pool/pending/pend-2026-03-01-retro-ag-x1y2-l1.json", "s4", "harmful"
            ),
            citation_event(".agents/learnings/gone.md", "s5", "helpful"),
        ],
    )
    first = apply_feedback(layout, locks, now=now)
    assert (first.citations_read, first.rewards, first.artifacts_updated) == (5, 3, 2)
    assert first.unknown_artifacts == [".agents/learnings/gone.md"]
    text = learning.read_text()
    assert "utility: 0.5950" in text and "reward_count: 2" in text and "helpful_count: 2" in text
    candidate = pool.require("pend-2026-03-01-retro-ag-x1y2-l1").candidate
    assert candidate["utility"] == pytest.approx(0.45) and candidate["harmful_count"] == 1
    feedback = [json.loads(line) for line in layout.feedback.read_text().splitlines()]
    assert [(f["utility_before"], f["utility_after"]) for f in feedback[:2]] == [
        (0.5, 0.55),
        (0.55, 0.595),
    ]
    second = apply_feedback(layout, locks, now=now + timedelta(hours=1))
    assert (
        second.citations_read == 0
        and second.rewards == 0
        and "utility: 0.5950" in learning.read_text()
    )
    # a torn last line waits for the next pass instead of being lost
    with layout.citations.open("a") as handle:
        handle.write(json.dumps(citation_event(str(learning), "s6", "helpful"))[:30])
    assert apply_feedback(layout, locks, now=now).citations_read == 0
