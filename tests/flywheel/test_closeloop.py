"""The whole loop in-process, lookups, the knowledge bridge, and existing AgentOps directories."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swarmq.flywheel.bridge import condense
from swarmq.flywheel.citations import citation_event, citation_stats, record_citations
from swarmq.flywheel.closeloop import close_loop
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.lookup import lookup, search
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import NARRATED

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


@pytest.fixture
def layout(tmp_path: Path) -> AgentsLayout:
    return AgentsLayout(tmp_path / "repo" / ".agents")


@pytest.fixture
def locks(tmp_path: Path) -> LocalLocks:
    return LocalLocks(tmp_path / "locks")


def test_transcript_to_matured_learning(layout: AgentsLayout, locks: LocalLocks) -> None:
    start = datetime.now(UTC)
    forged = forge_transcript(
        FIXTURES / "claude-code" / "session-v2.0.jsonl", layout, locks, NARRATED, now=start
    )
    assert forged.new == 6  # the fixture narrates 4 lessons: the 3 most confident kept
    sink = KnowledgeStore(
        layout.root.parent / ".swarm",
        locks=locks,
        data_dir=layout.root.parent / "hive",
        project_name="repo",
    )
    first = close_loop(layout, locks, sink=sink, now=start)
    assert first.ingest["added"] == 6 and not first.promoted
    assert first.held["age"] == 6 - first.rejected_discard
    # a later session looks the problem up: the candidates are cited by their pool paths
    hits = lookup(layout, locks, "visibility timeout redelivered", session_id="s-2")
    assert (
        hits and hits[0].kind == "candidate" and hits[0].cite_as.startswith(".agents/pool/pending/")
    )
    held = close_loop(layout, locks, sink=sink, now=start + timedelta(hours=2))
    assert not held.promoted and held.held["age"] >= 1
    # looking is exposure, not confirmation (issue 24): that session then refers to it in its
    # work (a confirmation that carries no reward, so the utility figures below stand)
    lookup(
        layout,
        locks,
        "visibility timeout redelivered",
        session_id="s-2",
        citation_type="reference",
        limit=1,
    )
    later = start + timedelta(hours=25)
    done = close_loop(layout, locks, sink=sink, now=later)
    assert [p.candidate_id for p in done.promoted] == [hits[0].id]
    learning = Path(done.promoted[0].artifact_path)
    assert learning.parent in (layout.learnings, layout.patterns) and learning.exists()
    # the session's gold candidate is shown provisionally meanwhile (issue 24); it is not this one
    [provisional] = [k["entry_id"] for k in first.knowledge if k["outcome"] == "provisional"]
    [bridged] = [e for e in sink.swarm.read().entries if e.id != provisional]
    assert bridged.category == "architecture" and "visibility" in bridged.lesson
    assert bridged.get("source_refs") == [str(learning)]
    assert [r["phase_number"] for r in bridged.confirmed_by] == [0]  # the promotion confirms it
    assert done.knowledge == [
        {"artifact_path": str(learning), "outcome": "added", "reason": None, "entry_id": bridged.id}
    ]
    # the promoted learning is found and cited, then judged helpful three times
    found = lookup(
        layout, locks, "visibility timeout redelivered", session_id="s-3", include_pool=False
    )
    assert found[0].kind in ("learning", "pattern") and found[0].path == str(learning)
    for session in ("s-4", "s-5", "s-6"):
        lookup(
            layout,
            locks,
            "visibility timeout redelivered",
            session_id=session,
            citation_type="helpful",
            include_pool=False,
            limit=1,
        )
    matured = close_loop(layout, locks, sink=sink, now=later + timedelta(hours=1))
    assert matured.feedback["rewards"] == 3
    assert matured.maturity.transitions == [
        {
            "path": str(learning),
            "from": "provisional",
            "to": "candidate",
            "reason": "utility 0.64 >= 0.55 and reward_count 3 >= 3",
        }
    ]
    text = learning.read_text()
    assert (
        "maturity: candidate" in text and "utility: 0.6355" in text and "helpful_count: 3" in text
    )
    assert matured.metrics["sigma"] > 0 and matured.metrics["rho"] == 1.0
    assert Path(str(matured.baseline)).name.startswith("baseline-")
    # running again changes nothing: every step is idempotent
    again = close_loop(layout, locks, sink=sink, now=later + timedelta(hours=1, minutes=5))
    assert not again.promoted and again.feedback["rewards"] == 0 and not again.maturity.transitions
    assert again.ingest["added"] == 0


def test_lookup_ranking_and_no_cite(layout: AgentsLayout, locks: LocalLocks) -> None:
    for name, utility in (("low", 0.1), ("high", 0.9)):
        path = layout.learnings / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\nid: {name}\nutility: {utility}\n---\n\n# Redis broker lesson\n\n"
            "## What We Learned\n\nKeep Redis as the broker for the quota gate.\n"
        )
    hits = search(layout, "redis broker quota")
    assert [h.id for h in hits] == ["high", "low"] and hits[0].relevance == 1.0
    assert lookup(layout, locks, "the and of", session_id="s") == []
    lookup(layout, locks, "redis broker", session_id="s", cite=False)
    assert not layout.citations.exists()
    with pytest.raises(ValueError, match="unknown citation type"):
        lookup(layout, locks, "redis", session_id="s", citation_type="liked")


def test_condense_for_the_knowledge_store() -> None:
    body = "# Learning: x\n\n**ID**: f-1\n\n## What We Learned\n\n" + "First sentence here. " * 20
    lesson = condense(body)
    assert len(lesson) <= 280 and lesson.endswith(".") and "**ID**" not in lesson


def agentops_project(root: Path) -> AgentsLayout:
    """An existing AgentOps .agents tree, in the shapes seen in real repositories."""
    layout = AgentsLayout(root / ".agents")
    layout.learnings.mkdir(parents=True)
    (layout.learnings / "2026-01-28-768611e9.md").write_text(
        "---\nid: 768611e9\ntype: learning\ndate: 2026-01-28\ncategory: testing\nconfidence: high\n"
        "maturity: provisional\nutility: 0.7\n---\n\n# Fixture isolation\n\nAlways give each test its own "
        "tmp dir; shared fixtures leaked state between Celery workers.\n"
    )
    (layout.learnings / "2026-01-15-session.md").write_text(
        "# Learning: Queue names are routes\n\n**ID**: L1\n**Category**: architecture\n**Confidence**: high\n\n"
        "## What We Learned\n\nA task named family.job routes to the family queue.\n\n## Source\n\n"
        "Session: 5f0c1e2a\n\n---\n\n# Learning: Stub\n\nNo significant learnings from this session\n"
    )
    (layout.pool / "pending").mkdir(parents=True)
    entry = {
        "candidate": {
            "id": "pend-old",
            "type": "solution",
            "content": "Set prefetch to 1 so long tasks do not hold a second message.",
            "source": {
                "transcript_path": "/Users/x/.claude/projects/p/a.jsonl",
                "message_index": 12,
                "timestamp": "2026-01-20T10:00:00.123456789+01:00",
                "session_id": "a1",
            },
            "raw_score": 0.91,
            "tier": "gold",
            "provenance_ids": ["prov-1"],
            "extracted_at": "2026-01-20T10:00:00.123456789+01:00",
            "is_current": True,
            "utility": 0.5,
            "last_reward_at": "0001-01-01T00:00:00Z",
            "maturity": "provisional",
            "confidence": 0.95,
        },
        "scoring_result": {
            "raw_score": 0.91,
            "tier_assignment": "gold",
            "rubric": {"specificity": 0.8},
            "gate_required": False,
            "scored_at": "2026-01-20T10:00:01+01:00",
        },
        "status": "pending",
        "added_at": "2026-01-20T10:00:00.123456789+01:00",
        "updated_at": "2026-01-20T10:00:00.123456789+01:00",
        "file_path": "/Users/x/repo/.agents/pool/pending/pend-old.json",
        "age": "3d",
        "future_field": {"kept": True},
    }
    (layout.pool / "pending" / "pend-old.json").write_text(json.dumps(entry, indent=2))
    other = json.loads(json.dumps(entry))
    other["candidate"]["id"] = "pend-quiet"
    other["candidate"]["content"] = "A quiet candidate nobody cited yet."
    (layout.pool / "pending" / "pend-quiet.json").write_text(json.dumps(other, indent=2))
    (layout.pool / "chain.jsonl").write_text(
        json.dumps(
            {
                "timestamp": "2026-01-20T10:00:00+01:00",
                "operation": "add",
                "candidate_id": "pend-old",
                "to_status": "pending",
            }
        )
        + "\n"
    )
    layout.citations.parent.mkdir(parents=True)
    layout.citations.write_text(
        "".join(
            json.dumps(line) + "\n"
            for line in [
                {
                    "artifact_path": ".agents/learnings/2026-01-28-768611e9.md",
                    "session_id": "session-20260129-165520",
                    "cited_at": "2026-01-29T16:55:20.012925+01:00",
                    "citation_type": "retrieved",
                    "feedback_at": "0001-01-01T00:00:00Z",
                },
                {
                    "artifact_path": str(root / ".agents/pool/pending/pend-old.json"),
                    "session_id": "s2",
                    "cited_at": "2026-01-30T09:00:00.5+01:00",
                    # a use, not a retrieval: looking does not promote (issue 24)
                    "citation_type": "helpful",
                    "feedback_at": "0001-01-01T00:00:00Z",
                },
                {
                    "artifact_path": ".agents/pool/pending/pend-quiet.json",
                    "session_id": "s3",
                    "cited_at": "2026-01-30T09:00:00Z",
                    "citation_type": "harmful",
                    "feedback_at": "0001-01-01T00:00:00Z",
                },
            ]
        )
    )
    return layout


def test_existing_agentops_directory_works_as_it_is(tmp_path: Path, locks: LocalLocks) -> None:
    layout = agentops_project(tmp_path / "repo")
    hand = layout.learnings / "2026-01-28-768611e9.md"
    before = hand.read_text()
    stats = citation_stats(layout)
    assert stats.counts["pool:pend-old"] == 1 and stats.counts["pool:pend-quiet"] == 1
    now = datetime(2026, 2, 10, tzinfo=UTC)
    result = close_loop(layout, locks, FlywheelConfig(), now=now)
    assert result.problems == []
    assert [p.candidate_id for p in result.promoted] == ["pend-old"]
    artifact = Path(result.promoted[0].artifact_path)
    assert artifact.read_text().startswith(
        "---\nid: pend-old\ntype: solution\ndate: 2026-02-10\ntier: gold\n"
    )
    quiet = Pool(layout).require("pend-quiet")
    assert quiet.data["future_field"] == {
        "kept": True
    }  # unknown fields survive the feedback rewrite
    assert quiet.candidate["provenance_ids"] == ["prov-1"] and quiet.candidate["harmful_count"] == 1
    assert hand.read_text() == before  # "confidence: high" is not decayed into a number
    clai = layout.learnings / "2026-01-15-session.md"
    assert "Queue names are routes" in clai.read_text()
    lines = (layout.pool / "chain.jsonl").read_text().splitlines()
    assert (
        json.loads(lines[0])["candidate_id"] == "pend-old" and len(lines) == 3
    )  # stage, promote appended
    assert result.metrics["tier_counts"]["learning"] == 3
    hits = search(layout, "queue routes family")
    assert hits and hits[0].path == str(clai)


def test_citations_survive_a_torn_line(layout: AgentsLayout, locks: LocalLocks) -> None:
    layout.citations.parent.mkdir(parents=True)
    layout.citations.write_text(
        '{"artifact_path": "a.md", "session_id": "s", "cited_at": "2026-01-01T00:00:00Z"'
    )
    record_citations(layout, locks, [citation_event("b.md", "s")])
    lines = layout.citations.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["artifact_path"] == "b.md"
    assert citation_stats(layout).corrupt == [1]


def test_a_file_of_several_learnings_gives_each_its_own_hit(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    layout.learnings.mkdir(parents=True, exist_ok=True)
    (layout.learnings / "2026-02-01-session.md").write_text(
        "---\nid: session-notes\nutility: 0.6\n---\n\n"
        "# Learning: Celery beat runs once\n\n**ID**: L1\n**Category**: decision\n\n## What We Learned\n\n"
        "Run exactly one beat per swarm, guarded by a Redis lock.\n\n"
        "# Learning: Ruff before commit\n\n**ID**: L2\n**Category**: learning\n\n## What We Learned\n\n"
        "The CI rejects commits that fail ruff; run it first.\n",
        encoding="utf-8",
    )
    (layout.learnings / "ports.md").write_text(
        "---\nid: ports\n---\n\n# Staging ports\n\n## Kubernetes ingress\n\nThe documented 8080 is stale; "
        "the service listens on 9090.\n",
        encoding="utf-8",
    )
    beat = search(layout, "celery beat lock")
    assert [(h.id, h.title) for h in beat] == [("L1", "Celery beat runs once")]
    assert beat[0].snippet.startswith("Run exactly one beat") and "ruff" not in beat[0].snippet
    ruff = search(layout, "ruff commit")
    assert [(h.id, h.title) for h in ruff] == [("L2", "Ruff before commit")]
    ingress = search(layout, "kubernetes ingress")  # words only in a heading
    assert [h.id for h in ingress] == ["ports"]


def test_condense_shortens_a_forged_lessons_calls_and_keeps_its_fact_and_fix() -> None:
    wrong = "X:\\03_ACG\\Odoo_Docs\\document_library\\models\\graph_sync.py"
    right = "X:\\03_ACG\\Custom_Addons\\document_library\\models\\graph_sync.py"
    body = (
        f"## What We Learned\n\n`{wrong}` failed (File does not exist. Note: your current working "
        "directory is X:\\03_ACG\\Odoo_Docs.); `document_library\\models\\graph_sync.py` lives in "
        f"`X:\\03_ACG\\Custom_Addons`, not in `X:\\03_ACG\\Odoo_Docs`; `{right}` worked instead.\n"
    )
    lesson = condense(body)
    assert len(lesson) <= 280
    assert "lives in `X:\\03_ACG\\Custom_Addons`, not in `X:\\03_ACG\\Odoo_Docs`" in lesson
    assert lesson.endswith("graph_sync.py` worked instead.")
    assert lesson.startswith("`X:\\03_ACG\\Odoo_Docs\\")


def test_search_reads_a_changed_or_moved_pool_candidate_again(
    layout: AgentsLayout, locks: LocalLocks
) -> None:
    """A process keeps its parse of each pool file (the warm hook server answers every failing
    call from the pool): a rewritten candidate is read again, a moved one is gone from search."""
    forge_transcript(FIXTURES / "claude-code" / "session-v2.0.jsonl", layout, locks)
    close_loop(layout, locks, now=datetime.now(UTC))
    hits = search(layout, "visibility timeout redelivered", limit=1)
    assert hits and hits[0].kind == "candidate"
    path = Path(hits[0].path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["candidate"]["content"] = "Lesson: the zebra stable keeps its hay dry under tarpaulin."
    path.write_text(json.dumps(data), encoding="utf-8")
    assert [h.id for h in search(layout, "zebra hay tarpaulin", limit=1)] == [hits[0].id]
    assert all(h.id != hits[0].id for h in search(layout, "visibility timeout redelivered"))
    path.unlink()
    assert search(layout, "zebra hay tarpaulin", limit=1) == []


def test_condense_shortens_a_wrapped_call_to_the_command_it_runs_at_word_ends() -> None:
    """A Windows agent runs every call through ``powershell.exe -NoProfile -Command``: a lesson
    shortened to the wrapper's head keeps nothing of the command that failed."""
    patch = " ".join(f"+line {n} of the new CONTRIBUTORS file" for n in range(12))
    call = (
        f"powershell.exe -NoProfile -Command \"apply_patch << 'PATCH' *** Add File: A.md {patch}\""
    )
    body = (
        f"`{call}` failed (Missing file specification after redirection operator.); "
        "`apply_patch *** Begin Patch *** Add File: A.md` worked instead."
    )
    lesson = condense(body)
    assert len(lesson) <= 280
    assert lesson.startswith("`powershell.exe -Command apply_patch << 'PATCH' *** Add File:")
    assert "NoProfile" not in lesson
    head, tail = lesson[1:].split("` failed", 1)[0].split("…")
    assert head.endswith(("of", "the", "new", "CONTRIBUTORS", "file", "line")) or head[-1].isdigit()
    assert (
        tail.split()[0] in {"+line", "of", "the", "new", "CONTRIBUTORS", "file"}
        or tail[0].isdigit()
    )
    assert "Missing file specification after redirection operator." in lesson
    assert lesson.endswith("worked instead.")


def test_condense_keeps_the_program_that_ran_a_wrapped_call() -> None:
    body = (
        f"`pwsh -NoLogo -NoProfile -Command Get-ChildItem -Force {'x' * 150} | Format-List` failed"
        " (pwsh : The term 'pwsh' is not recognized as the name of a cmdlet (CommandNotFoundException));"
        " `pwsh` is not installed here: run `powershell.exe -NoProfile -Command …` instead."
    )
    lesson = condense(body)
    assert len(lesson) <= 280
    assert lesson.startswith("`pwsh -Command Get-ChildItem -Force")
    assert lesson.endswith("instead.")


def test_condense_keeps_a_call_that_fits_as_it_was_run() -> None:
    body = "`bash -lc 'python manage.py migrate'` failed (python: not found); `python3` worked."
    assert condense(body) == body


def test_condense_keeps_only_the_head_of_a_call_forge_clipped_already() -> None:
    call = (
        "powershell.exe -NoProfile -Command apply_patch << 'PATCH' *** Add File: CONTRIBUTORS.md "
        + ("+x " * 40)
        + "+Contributors…"
    )
    body = (
        f"`{call}` failed ({'Missing file specification after redirection operator. ' * 3}); "
        + ("`apply_patch *** Begin Patch *** Add File: CONTRIBUTORS.md` worked instead.")
    )
    lesson = condense(body)
    assert len(lesson) <= 280
    assert lesson.startswith("`powershell.exe -Command apply_patch")
    assert "ontributors…`" not in lesson
