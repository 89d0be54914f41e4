"""Adding, reinforcing, compare-and-swap updates, transactions, quarantine and restore."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from swarmq.knowledge._sidecars import values
from swarmq.knowledge.errors import EntryNotFound, RestoreRefused, RevisionConflict
from swarmq.knowledge.model import Entry
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from tests.knowledge.conftest import Clock

LESSON = "Run the python test suite before pushing to the main branch"


def test_add_then_near_duplicate_reinforces_in_a_new_phase(
    knowledge: KnowledgeStore, clock: Clock
) -> None:
    first = knowledge.add_lesson(LESSON, phase=1)
    assert first.outcome == "added" and first.entry is not None
    clock.advance(hours=1)
    again = knowledge.add_lesson(LESSON + "!", phase=2)
    assert again.outcome == "reinforced" and again.entry is not None
    assert again.entry.id == first.entry.id
    assert again.entry.phase_numbers() == {1, 2}
    assert again.entry.confidence == pytest.approx(0.7)
    assert again.entry.updated_at == "2026-05-01T13:00:00.000Z"
    assert again.entry.phases_alive == 0
    same_phase = knowledge.add_lesson(LESSON, phase=2)
    assert same_phase.outcome == "already_confirmed_phase"
    assert knowledge.add_lesson(LESSON).outcome == "duplicate"
    assert len(knowledge.swarm.read().entries) == 1


def test_confirmations_are_capped(make_knowledge: Callable[..., KnowledgeStore]) -> None:
    knowledge = make_knowledge(max_confirmed_by=3)
    entry = knowledge.add_lesson(LESSON, phase=1).entry
    assert entry is not None
    for phase in range(2, 7):
        knowledge.swarm.reinforce(entry.id, phase)
    stored = knowledge.swarm.get(entry.id)
    assert stored is not None
    assert [r["phase_number"] for r in stored.confirmed_by] == [4, 5, 6]


def test_rejections_are_recorded_in_opencode_format(knowledge: KnowledgeStore) -> None:
    result = knowledge.add_lesson("too short")
    assert result.outcome == "rejected" and result.reason == "lesson too short (min 15 chars)"
    result = knowledge.add_lesson("Never run rm -rf on the build directory by hand")
    assert result.outcome == "rejected" and result.validation.layer == 2
    records = values(knowledge.swarm.files.rejected)
    assert [list(r) for r in records] == [
        ["id", "lesson", "rejection_reason", "rejected_at", "rejection_layer"]
    ] * 2
    assert records[1]["rejection_layer"] == 2


def test_contradiction_with_shared_tag_is_stored_with_a_warning(knowledge: KnowledgeStore) -> None:
    knowledge.add_lesson("Always rebase the git branch before opening a pull request")
    result = knowledge.add_lesson("Never rebase the git branch after opening a pull request")
    assert result.outcome == "added" and result.validation.layer == 3
    assert result.validation.severity == "warning" and result.entry is not None
    assert (
        result.validation.reason
        == "possible contradiction with an existing lesson with shared tags"
    )
    agreeing = knowledge.add_lesson("Never push directly to the git main branch without review")
    assert agreeing.outcome == "added" and agreeing.validation.severity is None
    review = knowledge.add_lesson("Run `uv sync` before the python test suite in CI")
    assert review.outcome == "added" and review.validation.severity == "warning"
    assert review.validation.reason == "potentially dangerous command pattern queued for review"


def test_update_is_compare_and_swap_on_revision(knowledge: KnowledgeStore) -> None:
    entry = knowledge.add_lesson(LESSON).entry
    assert entry is not None and entry.revision == 0
    updated = knowledge.swarm.update(entry.id, {"triggers": ["git push"]}, expected_revision=0)
    assert updated.revision == 1 and updated.strings("triggers") == ["git push"]
    with pytest.raises(RevisionConflict) as info:
        knowledge.swarm.update(entry.id, {"triggers": ["other"]}, expected_revision=0)
    assert info.value.actual == 1
    with pytest.raises(EntryNotFound):
        knowledge.swarm.update("missing", {"x": 1})
    # a no-op update keeps the bytes
    before = knowledge.swarm.files.knowledge.read_bytes()
    assert knowledge.swarm.update(entry.id, {"triggers": ["git push"]}).revision == 1
    assert knowledge.swarm.files.knowledge.read_bytes() == before


def test_transaction_keeps_unknown_keys_and_records_removals(knowledge: KnowledgeStore) -> None:
    a = knowledge.add_lesson(LESSON).entry
    b = knowledge.add_lesson("Prefer docker compose profiles over separate compose files").entry
    assert a is not None and b is not None
    with knowledge.swarm.transaction() as txn:
        data = txn.get(a.id).to_dict()  # type: ignore[union-attr]
        data["supersedes"] = [b.id]
        data["x-custom"] = {"kept": True}
        txn.put(data, expected_revision=a.revision)
        txn.remove(b.id, reason="merged")
    entries = knowledge.swarm.read().entries
    assert [e.id for e in entries] == [a.id]
    assert entries[0].get("x-custom") == {"kept": True}
    evicted = values(knowledge.swarm.files.evicted)
    assert evicted[0]["reason"] == "merged" and json.loads(evicted[0]["line"])["id"] == b.id


def test_transaction_that_raises_writes_nothing(knowledge: KnowledgeStore) -> None:
    a = knowledge.add_lesson(LESSON).entry
    assert a is not None
    before = knowledge.swarm.files.knowledge.read_bytes()
    with pytest.raises(RuntimeError), knowledge.swarm.transaction() as txn:
        txn.remove(a.id, reason="merged")
        raise RuntimeError("boom")
    assert knowledge.swarm.files.knowledge.read_bytes() == before


def test_fifo_cap_evicts_oldest_into_the_evicted_sidecar(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = make_knowledge(swarm_max_entries=3)
    ids = []
    for word in ("alpha", "bravo", "charlie", "delta", "echo"):
        entry = knowledge.add_lesson(f"Use the {word} config file for {word} deployments").entry
        assert entry is not None
        ids.append(entry.id)
    assert [e.id for e in knowledge.swarm.read().entries] == ids[2:]
    assert [v["id"] for v in values(knowledge.swarm.files.evicted)] == ids[:2]


def test_quarantine_and_restore(knowledge: KnowledgeStore) -> None:
    entry = knowledge.add_lesson(LESSON, phase=1).entry
    assert entry is not None
    record = knowledge.swarm.quarantine(entry.id, "false positive\x07", reported_by="architect")
    assert knowledge.swarm.get(entry.id) is None
    held = values(knowledge.swarm.files.quarantined)
    assert held[0]["status"] == "quarantined" and held[0]["original_status"] == "candidate"
    assert held[0]["quarantine_reason"] == "false positive"
    assert list(held[0])[-4:] == [
        "original_status",
        "quarantine_reason",
        "quarantined_at",
        "reported_by",
    ]
    assert values(knowledge.swarm.files.rejected)[0]["rejection_layer"] == 3
    assert knowledge.swarm.quarantine(entry.id, "again").id == record.id  # idempotent
    restored = knowledge.swarm.restore(entry.id)
    assert restored.status == "candidate" and restored.confirmed_by == entry.confirmed_by
    assert "quarantine_reason" not in restored.data
    assert values(knowledge.swarm.files.quarantined) == []
    assert values(knowledge.swarm.files.rejected) == []
    assert knowledge.swarm.get(entry.id) is not None


def test_restore_revalidates_only_when_asked(knowledge: KnowledgeStore) -> None:
    knowledge.swarm.files.quarantined.parent.mkdir(parents=True, exist_ok=True)
    knowledge.swarm.files.quarantined.write_text(
        json.dumps(
            {
                "id": "q1",
                "tier": "swarm",
                "lesson": "Never rm -rf the generated build output",
                "category": "tooling",
                "scope": "global",
                "confidence": 0.6,
                "status": "quarantined",
                "original_status": "established",
            }
        )
        + "\n"
    )
    held = Entry(json.loads(knowledge.swarm.files.quarantined.read_text()))
    assert knowledge.swarm.restore_verdict(held).reason == "dangerous command pattern detected"
    with pytest.raises(RestoreRefused, match="dangerous command"):
        knowledge.swarm.restore("q1", revalidate=True)
    restored = knowledge.swarm.restore("q1")  # quarantined by opencode-swarm: no place, appended
    assert restored.status == "established" and knowledge.swarm.get("q1") is not None
    assert knowledge.swarm.files.quarantined.read_text() == ""


def test_quarantine_then_restore_puts_the_line_back_byte_for_byte(
    knowledge: KnowledgeStore,
) -> None:
    for n in range(4):
        knowledge.add_lesson(f"Run the python test suite number {n} before merging branch {n}")
    path = knowledge.swarm.files.knowledge
    path.write_bytes(path.read_bytes().replace(b'"confidence":0.6', b'"confidence":0.60', 1))
    before = path.read_bytes()
    ids = [e.id for e in knowledge.swarm.read().entries]
    for entry_id in (ids[0], ids[2], ids[3]):
        knowledge.swarm.quarantine(entry_id, "check", "user")
        assert entry_id.encode() not in path.read_bytes()
        knowledge.swarm.restore(entry_id)
        assert path.read_bytes() == before
    # a neighbour gone meanwhile: the line still goes back next to the one that remains
    knowledge.swarm.quarantine(ids[1], "check", "user")
    knowledge.swarm.quarantine(ids[2], "check", "user")
    knowledge.swarm.restore(ids[1])
    assert [e.id for e in knowledge.swarm.read().entries] == [ids[0], ids[1], ids[3]]


def test_restore_revives_an_archived_entry_to_its_prior_status(knowledge: KnowledgeStore) -> None:
    entry = knowledge.add_lesson(LESSON).entry
    assert entry is not None
    knowledge.swarm.update(entry.id, {"status": "archived", "pre_archive_status": "established"})
    revived = knowledge.swarm.restore(entry.id)
    assert revived.status == "established" and "pre_archive_status" not in revived.data


def test_actionability_layer_holds_plain_prose(knowledge: KnowledgeStore) -> None:
    result = knowledge.swarm.add(NewLesson(LESSON, require_actionable=True))
    assert result.outcome == "unactionable" and result.reason == "missing_predicate_and_scope"
    held = values(knowledge.swarm.files.unactionable)[0]
    assert held["status"] == "quarantined_unactionable"
    ok = knowledge.swarm.add(
        NewLesson(
            LESSON,
            require_actionable=True,
            directives={"required_actions": ["run pytest"], "applies_to_tools": ["bash"]},
        )
    )
    assert ok.outcome == "added"
