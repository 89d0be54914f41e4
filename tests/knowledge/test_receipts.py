"""Acknowledgement markers, counters and the hash-chained receipt journal."""

from __future__ import annotations

import json

import pytest

from swarmq.knowledge._receipts import GENESIS, receipt_hash
from swarmq.knowledge.acks import acknowledge, parse_markers
from swarmq.knowledge.errors import ReceiptChainBroken
from swarmq.knowledge.inject import inject, ledger
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from tests.knowledge.conftest import Clock


def shown(knowledge: KnowledgeStore) -> tuple[str, list[str]]:
    for word in ("alpha", "bravo", "charlie"):
        knowledge.add_lesson(f"Use the {word} cache layer when reading {word} tables in sql")
    injection = inject(knowledge, QueryContext(text="tables", phase=1))
    return injection.trace_id, [r.entry.id for r in injection.shown]


def test_marker_parsing() -> None:
    text = (
        "done. KNOWLEDGE_APPLIED:t-1:e-1\nKNOWLEDGE_N_A:t-1:e-2 reason=not this turn\n"
        "KNOWLEDGE_VIOLATED:t-1:lesson-abc123 reason=ran eval\nKNOWLEDGE_BOGUS:t:e"
    )
    markers = parse_markers(text)
    assert [(m.outcome, m.entry_id, m.reason) for m in markers] == [
        ("applied", "e-1", None),
        ("n_a", "e-2", "not this turn"),
        ("violated", "lesson-abc123", "ran eval"),
    ]


def test_acks_update_counters_once(knowledge: KnowledgeStore) -> None:
    trace, ids = shown(knowledge)
    text = (
        f"KNOWLEDGE_APPLIED:{trace}:{ids[0]}\nKNOWLEDGE_N_A:{trace}:{ids[1]} reason=n/a\n"
        f"KNOWLEDGE_VIOLATED:{trace}:{ids[2]} reason=oops"
    )
    results = acknowledge(knowledge, text, agent="architect")
    assert [r.status for r in results] == ["committed"] * 3
    applied = knowledge.swarm.get(ids[0])
    assert applied is not None
    assert (
        applied.counter("applied_explicit_count") == 1
        and applied.counter("acknowledged_count") == 1
    )
    assert applied.get("last_applied_at") == "2026-05-01T12:00:00.000Z"
    na = knowledge.swarm.get(ids[1])
    assert na is not None and na.counter("acknowledged_count") == 1
    assert "n_a_count" not in na.outcomes
    violated = knowledge.swarm.get(ids[2])
    assert violated is not None and violated.counter("violated_count") == 1
    assert violated.outcomes["violation_timestamps"] == ["2026-05-01T12:00:00.000Z"]
    # duplicates are idempotent, conflicts and unknown pairs are rejected explicitly
    again = acknowledge(
        knowledge,
        text + f"\nKNOWLEDGE_IGNORED:{trace}:{ids[0]} reason=x\n"
        f"KNOWLEDGE_APPLIED:nope:{ids[0]}\nKNOWLEDGE_IGNORED:{trace}:{ids[1]}",
    )
    assert [r.status for r in again] == ["duplicate"] * 3 + ["rejected"] * 3
    assert "conflicting" in (again[3].detail or "") and "unknown trace" in (again[4].detail or "")
    assert knowledge.swarm.get(ids[0]).counter("applied_explicit_count") == 1  # type: ignore[union-attr]


def test_late_and_reasonless_terminals_are_rejected(
    knowledge: KnowledgeStore, clock: Clock
) -> None:
    trace, ids = shown(knowledge)
    assert acknowledge(knowledge, f"KNOWLEDGE_IGNORED:{trace}:{ids[0]}")[0].status == "rejected"
    clock.advance(days=8)
    result = acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{trace}:{ids[0]}")[0]
    assert result.status == "rejected" and "late" in (result.detail or "")


def test_chain_format_and_tamper_detection(knowledge: KnowledgeStore) -> None:
    trace, ids = shown(knowledge)
    acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{trace}:{ids[0]}")
    path = knowledge.receipts_path
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == [1, 2]
    assert records[0]["prev_hash"] == GENESIS and records[1]["prev_hash"] == records[0]["hash"]
    assert list(records[0]) == [
        "schema_version",
        "cutover_version",
        "seq",
        "prev_hash",
        "event_id",
        "timestamp",
        "kind",
        "payload",
        "hash",
    ]
    assert all(r["hash"] == receipt_hash(r) for r in records)
    assert ledger(knowledge).verify().seq == 2
    # tamper with the payload of seq 2
    tampered = lines[1].replace('"outcome":"applied"', '"outcome":"ignored"')
    path.write_text(lines[0] + "\n" + tampered + "\n", encoding="utf-8")
    with pytest.raises(ReceiptChainBroken) as info:
        ledger(knowledge).verify()
    assert info.value.seq == 2 and "hash" in info.value.reason
    # a broken link, a gap and a torn last line are reported too, never repaired
    path.write_text(lines[1] + "\n", encoding="utf-8")
    with pytest.raises(ReceiptChainBroken) as info:
        ledger(knowledge).verify()
    assert info.value.seq == 1
    path.write_text(lines[0] + "\n" + lines[1][:30], encoding="utf-8")
    with pytest.raises(ReceiptChainBroken, match="unterminated") as info:
        ledger(knowledge).verify()
    assert info.value.seq == 2
    before = path.read_bytes()
    with pytest.raises(ReceiptChainBroken):
        acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{trace}:{ids[1]}")
    assert path.read_bytes() == before
