"""Confirmation by use: exposure never promotes; a recurring failure, an acknowledgement or a
helpful citation does; high-confidence candidates are shown provisionally, then confirmed or
retired. Real files, real stores, on a clock of the sessions' own (2024, not the wall's)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from swarmq.flywheel.citations import citation_event, record_citations
from swarmq.flywheel.closeloop import close_loop, reject_candidate
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.confirm import (
    INJECTED,
    RECURRENCE,
    acknowledgement_citations,
    record_acknowledgements,
    record_exposure,
    record_failure,
)
from swarmq.flywheel.lookup import lookup
from swarmq.flywheel.model import PoolStatus
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.acks import acknowledge
from swarmq.knowledge.inject import inject
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.storage.locking import LocalLocks

T0 = datetime(2024, 5, 6, 9, 30, tzinfo=UTC)
PYTHON = (
    "`python manage.py test` failed (bash: python: command not found); "
    "`python3 manage.py test` worked instead, because only python3 is installed on this host."
)
PYTHON_AGAIN = (
    "Running `python scripts/seed.py` failed (bash: python: command not found) on this "
    "machine; use `python3 scripts/seed.py` since the interpreter is named python3 here."
)
ZSH = (
    "`ls app/[id]/page.tsx` failed (zsh: no matches found: app/[id]/page.tsx); quoting the "
    "path as `ls 'app/[id]/page.tsx'` worked instead, because zsh expands brackets."
)
PLAIN = (
    "The invoice export writes to a temporary file and renames it when complete, so a reader "
    "never sees half an export; see `billing/export.py`."
)


@pytest.fixture
def layout(tmp_path: Path) -> AgentsLayout:
    return AgentsLayout(tmp_path / "repo" / ".agents")


@pytest.fixture
def locks(tmp_path: Path) -> LocalLocks:
    return LocalLocks(tmp_path / "locks")


@pytest.fixture
def store(layout: AgentsLayout, locks: LocalLocks) -> KnowledgeStore:
    clock = {"now": T0}
    knowledge = KnowledgeStore(
        layout.root.parent / ".swarm",
        locks=locks,
        data_dir=layout.root.parent / "hive",
        project_name="repo",
        clock=lambda: clock["now"],
    )
    knowledge.swarm_dir.mkdir(parents=True, exist_ok=True)
    return knowledge


def pending(
    layout: AgentsLayout,
    name: str,
    session: str,
    when: datetime,
    body: str,
    *,
    category: str = "failure",
    confidence: str = "high",
) -> Path:
    """A forged pending file as forge writes it, learned in ``session`` at ``when``."""
    stamp = when.isoformat().replace("+00:00", "Z")
    text = (
        f"---\ndate: {when:%Y-%m-%d}\nforged_at: {stamp}\nsource: swarmq-forge\n"
        f"session_id: {session}\n---\n\n# Learning: {body[:60]}\n\n**ID**: {name}\n"
        f"**Category**: {category}\n**Confidence**: {confidence}\n**Session**: {session}\n"
        f"**Timestamp**: {stamp}\n\n## What We Learned\n\n{body}\n"
    )
    layout.pending.mkdir(parents=True, exist_ok=True)
    path = layout.pending / f"{when:%Y-%m-%d}-forge-{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def candidates(layout: AgentsLayout) -> dict[str, Any]:
    return {e.id: e for e in Pool(layout).entries()}


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


QUIET = FlywheelConfig(provisional=False)


def test_looking_is_exposure_and_never_promotes(layout: AgentsLayout, locks: LocalLocks) -> None:
    pending(layout, "p1", "s-1", T0, PYTHON)
    first = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=1))
    [candidate] = first.ingest["added_ids"]
    hits = lookup(layout, locks, "python manage.py command", session_id="s-2", when=T0)
    assert [h.id for h in hits] == [candidate] and hits[0].kind == "candidate"
    for session in ("s-3", "s-4", "s-5"):  # seen again and again, by other sessions
        lookup(layout, locks, "python command not found", session_id=session, when=T0)
    looked = close_loop(layout, locks, QUIET, now=T0 + timedelta(days=3))
    assert not looked.promoted and looked.held == {"citations": 1}
    assert {c["citation_type"] for c in lines(layout.citations)} == {"retrieved"}

    # a later session says it helped: that is use, and it promotes without the 24 h wait
    lookup(
        layout,
        locks,
        "python manage.py",
        session_id="s-6",
        citation_type="helpful",
        limit=1,
        when=T0 + timedelta(days=3),
    )
    used = close_loop(layout, locks, QUIET, now=T0 + timedelta(days=3, hours=1))
    assert [p.candidate_id for p in used.promoted] == [candidate]


def test_the_age_gate_reads_the_sessions_clock(layout: AgentsLayout, locks: LocalLocks) -> None:
    """A confirmation from the candidate's own session waits out 24 h of the sessions' clock
    (in 2024: the wall clock would have let it through at once)."""
    pending(layout, "p1", "s-1", T0, PYTHON)
    close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=1))
    [entry] = candidates(layout).values()
    record_citations(
        layout,
        locks,
        [citation_event(f".agents/pool/pending/{entry.id}.json", "s-1", "helpful", when=T0)],
    )
    held = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=2))
    assert not held.promoted and held.held == {"age": 1}
    later = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=25))
    assert [p.candidate_id for p in later.promoted] == [entry.id]
    learning = Path(later.promoted[0].artifact_path)
    assert learning.name.startswith("2024-05-07-")  # dated on the sessions' clock


def test_a_failure_recurring_in_another_session_confirms_the_lesson(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    pending(layout, "p1", "s-1", T0, PYTHON)
    pending(layout, "z1", "s-1", T0, ZSH)
    close_loop(layout, locks, QUIET, now=T0 + timedelta(minutes=30))
    by_body = {
        e.content.split("## What We Learned")[-1].strip()[:10]: e.id
        for e in candidates(layout).values()
    }
    python_id, zsh_id = by_body[PYTHON[:10]], by_body[ZSH[:10]]
    meta = candidates(layout)[python_id].candidate["metadata"]
    assert meta["failure_signature"] == "python: command not found"

    # the same session failing again is not a recurrence; text without a failure records nothing
    assert (
        record_failure(
            layout,
            locks,
            "$ python x.py\nbash: python: command not found",
            session_id="s-1",
            when=T0 + timedelta(minutes=40),
        )
        is not None
    )
    assert record_failure(layout, locks, "all 12 tests passed", session_id="s-2") is None
    same = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=1))
    assert not same.recurrences and not same.promoted

    seen = record_failure(
        layout,
        locks,
        "$ python -m pytest -q\nbash: python: command not found",
        session_id="s-2",
        when=T0 + timedelta(hours=3),
    )
    assert seen is not None and seen.signature == "python: command not found"
    assert lines(layout.failures)[-1] == {
        "signature": "python: command not found",
        "session_id": "s-2",
        "observed_at": "2024-05-06T12:30:00.000000Z",
    }
    recurred = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=4))
    assert [p.candidate_id for p in recurred.promoted] == [python_id]  # 4 h old: s-2 confirmed it
    [cited] = [c for c in lines(layout.citations) if c.get("match_provenance") == RECURRENCE]
    assert cited == {
        "artifact_path": f".agents/pool/pending/{python_id}.json",
        "session_id": "s-2",
        "cited_at": "2024-05-06T12:30:00.000000Z",
        "citation_type": "reference",
        "query": "python: command not found",
        "match_provenance": RECURRENCE,
        "feedback_at": "0001-01-01T00:00:00Z",
    }
    assert zsh_id in candidates(layout)  # its failure never came back
    again = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=5))
    assert not again.recurrences and not again.promoted


EDIT = (
    "`Edit src/app.py` failed (String to replace not found in file.); re-reading the file and "
    "editing the current text worked instead, because the file had changed since it was read."
)


def test_the_editing_harness_recurring_confirms_nothing(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    """Every session trips over an Edit whose old string moved: that recurring is no proof."""
    pending(layout, "e1", "s-1", T0, EDIT, confidence="medium")
    record_failure(layout, locks, "String to replace not found in file.", session_id="s-2", when=T0)
    pending(layout, "e2", "s-3", T0 + timedelta(hours=2), EDIT.replace("src/app.py", "b.py"))
    done = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=3))
    assert lines(layout.failures)[0]["signature"] == "Edit: string to replace not found"
    assert not done.recurrences and not done.promoted and len(candidates(layout)) == 2


def test_two_sessions_forging_one_failure_confirm_each_other(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    pending(layout, "p1", "s-1", T0, PYTHON)
    first = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=1))
    assert not first.promoted and not first.recurrences
    pending(layout, "p2", "s-2", T0 + timedelta(hours=5), PYTHON_AGAIN)
    second = close_loop(layout, locks, QUIET, now=T0 + timedelta(hours=6))
    assert sorted(r["session_id"] for r in second.recurrences) == ["s-1", "s-2"]
    assert len(second.promoted) == 2 and not candidates(layout)


def test_a_provisional_lesson_is_shown_marked_then_confirmed_by_its_use(
    layout: AgentsLayout, locks: LocalLocks, store: KnowledgeStore
) -> None:
    pending(layout, "p1", "s-1", T0, PYTHON)
    pending(layout, "n1", "s-1", T0, PLAIN, category="learning", confidence="medium")
    first = close_loop(layout, locks, now=T0 + timedelta(hours=1), sink=store)
    assert not first.promoted
    [published] = [k for k in first.knowledge if k["outcome"] == "provisional"]
    [entry] = store.swarm.read().entries
    assert entry.id == published["entry_id"] and "provisional" in entry.tags
    assert entry.confirmed_by == [] and entry.get("source_refs") == [published["artifact_path"]]
    assert published["artifact_path"].startswith(".agents/pool/pending/")
    ids = {e.candidate["metadata"].get("provisional_entry_id") for e in candidates(layout).values()}
    assert ids == {entry.id, None}  # the plain silver lesson without a failure waits unseen

    shown = inject(
        store, QueryContext(text="run python manage.py test"), session_id="s-2", record=True
    )
    assert shown.block is not None and "provisional: not yet confirmed by use" in shown.block
    results = acknowledge(store, f"KNOWLEDGE_APPLIED:{shown.trace_id}:{entry.id} reason=used")
    assert [r.status for r in results] == ["committed"] and results[0].session_id == "s-2"
    assert record_acknowledgements(layout, locks, results, when=T0 + timedelta(hours=2)) == 1
    # a repeated marker is a duplicate: fed back once
    again = acknowledge(store, f"KNOWLEDGE_APPLIED:{shown.trace_id}:{entry.id} reason=used")
    assert acknowledgement_citations(layout, again) == []

    confirmed = close_loop(layout, locks, now=T0 + timedelta(hours=3), sink=store)
    [promotion] = confirmed.promoted
    assert confirmed.feedback["rewards"] == 1
    assert [k["outcome"] for k in confirmed.knowledge] == ["confirmed"]
    after = store.swarm.get(entry.id)
    assert after is not None and "provisional" not in after.tags and after.is_active
    assert after.get("source_refs") == [promotion.artifact_path]
    assert [c["phase_number"] for c in after.confirmed_by] == [0]
    text = Path(promotion.artifact_path).read_text(encoding="utf-8")
    assert "utility: 0.5500" in text and "reward_count: 1" in text
    block = inject(store, QueryContext(text="python manage.py test"), record=False).block
    assert block is not None and "provisional" not in block


def test_provisional_lessons_are_retired_when_refuted_or_never_confirmed(
    layout: AgentsLayout, locks: LocalLocks, store: KnowledgeStore
) -> None:
    pending(layout, "p1", "s-1", T0, PYTHON)
    pending(layout, "z1", "s-1", T0, ZSH, confidence="medium")  # shown for its failure signature
    close_loop(layout, locks, now=T0 + timedelta(hours=1), sink=store)
    entries = {("python" if "python" in e.lesson else "zsh"): e for e in store.swarm.read().entries}
    assert set(entries) == {"python", "zsh"}
    shown = inject(
        store, QueryContext(text="zsh no matches found ls app id page"), session_id="s-2"
    )
    assert entries["zsh"].id in [r.entry.id for r in shown.shown]
    refuted = acknowledge(
        store, f"KNOWLEDGE_CONTRADICTED:{shown.trace_id}:{entries['zsh'].id} reason=bash here"
    )
    [line] = acknowledgement_citations(layout, refuted, when=T0 + timedelta(hours=2))
    assert line["citation_type"] == "refuted" and line["session_id"] == "s-2"
    record_acknowledgements(layout, locks, refuted, when=T0 + timedelta(hours=2))

    soon = close_loop(layout, locks, now=T0 + timedelta(hours=3), sink=store)
    assert [(k["outcome"], k["entry_id"]) for k in soon.knowledge] == [
        ("retired", entries["zsh"].id)
    ]
    zsh = store.swarm.get(entries["zsh"].id)
    assert zsh is not None and zsh.status == "archived" and not zsh.is_active
    assert zsh.get("retired_reason") == "refuted by an acknowledgement"

    # shown again and again is still not confirmed
    python_shown = inject(store, QueryContext(text="python manage.py test"), session_id="s-3")
    assert entries["python"].id in [r.entry.id for r in python_shown.shown]
    assert (
        record_exposure(layout, locks, python_shown, session_id="s-3", when=T0 + timedelta(days=2))
        == 1
    )
    exposed = lines(layout.citations)[-1]
    assert exposed["citation_type"] == "retrieved" and exposed["match_provenance"] == INJECTED
    late = close_loop(layout, locks, now=T0 + timedelta(days=15), sink=store)
    assert [(k["outcome"], k["entry_id"]) for k in late.knowledge] == [
        ("retired", entries["python"].id)
    ]
    python = store.swarm.get(entries["python"].id)
    assert python is not None and python.get("retired_reason") == "not confirmed within 14 days"
    # the candidates stay in the pool: a recurrence can still make them graduate
    assert {e.status for e in candidates(layout).values()} == {PoolStatus.PENDING}
    record_failure(
        layout,
        locks,
        "bash: python: command not found",
        session_id="s-9",
        when=T0 + timedelta(days=16),
    )
    back = close_loop(layout, locks, now=T0 + timedelta(days=16, hours=1), sink=store)
    assert len(back.promoted) == 1
    assert [k["outcome"] for k in back.knowledge] == ["added"]  # a fresh, confirmed entry
    assert nothing_provisional(store)


def test_rejecting_a_candidate_retires_its_provisional_lesson(
    layout: AgentsLayout, locks: LocalLocks, store: KnowledgeStore
) -> None:
    pending(layout, "p1", "s-1", T0, PYTHON)
    first = close_loop(layout, locks, now=T0 + timedelta(hours=1), sink=store)
    [published] = first.knowledge
    [candidate] = candidates(layout)
    reject_candidate(layout, locks, candidate, "a person says it is wrong", reviewer="ana")
    after = close_loop(layout, locks, now=T0 + timedelta(hours=2), sink=store)
    assert [(k["outcome"], k["reason"]) for k in after.knowledge] == [
        ("retired", "its candidate was rejected")
    ]
    entry = store.swarm.get(published["entry_id"])
    assert entry is not None and entry.status == "archived"
    assert not close_loop(layout, locks, now=T0 + timedelta(hours=3), sink=store).knowledge


def test_a_crash_after_publishing_a_provisional_lesson_is_repaired(
    layout: AgentsLayout, locks: LocalLocks, store: KnowledgeStore
) -> None:
    """The entry was written but its pool file never recorded it: the next pass adopts it (no
    second entry), and graduating settles it."""
    pending(layout, "p1", "s-1", T0, PYTHON)
    [published] = close_loop(layout, locks, now=T0 + timedelta(hours=1), sink=store).knowledge
    [entry] = candidates(layout).values()
    for key in ("provisional_outcome", "provisional_entry_id", "provisional_at"):
        del entry.candidate["metadata"][key]
    entry.path.write_text(entry.dumps(), encoding="utf-8")
    again = close_loop(layout, locks, now=T0 + timedelta(hours=2), sink=store)
    assert [(k["outcome"], k["entry_id"]) for k in again.knowledge] == [
        ("provisional", published["entry_id"])
    ]
    assert len(store.swarm.read().entries) == 1
    # lost again, then confirmed by a recurrence: the promotion still settles that entry
    entry = candidates(layout)[entry.id]
    del entry.candidate["metadata"]["provisional_entry_id"]
    entry.path.write_text(entry.dumps(), encoding="utf-8")
    record_failure(layout, locks, "bash: python: command not found", session_id="s-2", when=T0)
    done = close_loop(layout, locks, now=T0 + timedelta(hours=3), sink=store)
    assert [k["outcome"] for k in done.knowledge] == ["confirmed"]
    [settled] = store.swarm.read().entries
    assert settled.id == published["entry_id"] and "provisional" not in settled.tags
    assert settled.get("source_refs") == [done.promoted[0].artifact_path]


def nothing_provisional(store: KnowledgeStore) -> bool:
    return not [e for e in store.swarm.read().entries if e.is_active and "provisional" in e.tags]


def test_the_cli_notes_failures_and_closes_the_loop_on_the_sessions_clock(
    roster_file: Path,
) -> None:
    from typer.testing import CliRunner

    from swarmq.cli import app

    runner = CliRunner()
    layout = AgentsLayout(roster_file.parent / "project" / ".agents")
    (roster_file.parent / "project" / ".swarm").mkdir()
    pending(layout, "p1", "s-1", T0, PYTHON)

    def run(*args: str) -> Any:
        done = runner.invoke(app, ["--config", str(roster_file), *args])
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout) if "--json" in args else done.output

    first = run("flywheel", "close-loop", "--now", "2024-05-06T10:00:00Z", "--json")
    assert first["ingest"]["added"] == 1 and not first["promoted"]
    noted = run(
        "flywheel",
        "observe-failure",
        "--error",
        "$ python app.py\nbash: python: command not found",
        "--session-id",
        "s-2",
        "--at",
        "2024-05-06T11:00:00Z",
        "--json",
    )
    assert noted == {
        "signature": "python: command not found",
        "session_id": "s-2",
        "observed_at": "2024-05-06T11:00:00.000000Z",
    }
    assert run("flywheel", "observe-failure", "--error", "ok", "--session-id", "s-2") == ""
    second = run("flywheel", "close-loop", "--now", "2024-05-06T12:00:00Z", "--json")
    assert len(second["promoted"]) == 1 and second["recurrences"][0]["session_id"] == "s-2"
    assert [k["outcome"] for k in second["knowledge"]] == ["confirmed"]  # was provisional

    # `swarmq knowledge ack` feeds an applied lesson back to its learning
    shown = run("knowledge", "inject", "python manage.py test", "--session", "s-3", "--json")
    [entry] = [s["id"] for s in shown["shown"]]
    marker = f"KNOWLEDGE_APPLIED:{shown['trace_id']}:{entry} reason=used python3"
    assert [r["status"] for r in run("knowledge", "ack", marker, "--json")] == ["committed"]
    last = lines(layout.citations)[-1]
    assert (last["citation_type"], last["session_id"], last["query"]) == ("applied", "s-3", entry)
    assert last["artifact_path"].startswith(".agents/learnings/")
    third = run("flywheel", "close-loop", "--now", "2024-05-06T13:00:00Z", "--json")
    assert third["feedback"]["rewards"] == 1
    bad = runner.invoke(
        app, ["--config", str(roster_file), "flywheel", "close-loop", "--now", "soon"]
    )
    assert bad.exit_code == 1 and "not an RFC 3339 time" in bad.output
