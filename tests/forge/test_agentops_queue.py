"""AgentOps' session-side files (queue, index, session summaries) and forging the queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmq.flywheel._pending import parse_learning_blocks
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.sessions import Problems, all_sessions, queued_snippets, tidy_snippet
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.agentops_queue import close_loop_with_queue, forge_queue
from swarmq.forge.config import ForgeConfig
from swarmq.storage.locking import LocalLocks

TRANSCRIPT = "/home/dev/.claude/projects/-home-dev-svc/5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f.jsonl"


@pytest.fixture
def layout(tmp_path: Path) -> AgentsLayout:
    layout = AgentsLayout(tmp_path / "repo" / ".agents")
    (layout.ao / "index").mkdir(parents=True)
    (layout.ao / "sessions").mkdir()
    queue = [
        {
            "session_id": "5f0c1d2e",
            "session_path": ".agents/ao/sessions/2026-03-01-broker-5f0c1d2.md",
            "transcript_path": TRANSCRIPT,
            "summary": "Moved the broker to Redis",
            "decisions": [
                "...ided to keep Redis as the broker because RabbitMQ lost acks during restarts of the "
                "worker pod, which doubled...",
                "...let me check the logs...",
            ],
            "knowledge": [
                "...til the lock is taken first: never run two beats \u003cper swarm\u003e, because every "
                "periodic job is enqueued twice..."
            ],
            "queued_at": "2026-03-01T10:00:00.000Z",
        },
        "not an object",
    ]
    (layout.ao / "pending.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in queue) + "{broken\n", encoding="utf-8"
    )
    (layout.ao / "index" / "sessions.jsonl").write_text(
        json.dumps(
            {
                "session_id": "5f0c1d2e",
                "date": "2026-03-01T10:00:00.000Z",
                "session_path": ".agents/ao/sessions/2026-03-01-broker-5f0c1d2.md",
                "summary": "Moved the broker",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (layout.ao / "sessions" / "2026-03-01-broker-5f0c1d2.jsonl").write_text(
        json.dumps(
            {
                "session_id": "5f0c1d2e",
                "date": "2026-03-01",
                "summary": "Moved the broker",
                "files_changed": ["a.py"],
                "issues": [],
                "tool_calls": {"Bash": 3},
                "tokens": {"input": 1, "output": 2, "total": 3},
                "transcript_path": TRANSCRIPT,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (layout.ao / "sessions" / "2026-03-01-broker-5f0c1d2.md").write_text(
        "twin of the jsonl", encoding="utf-8"
    )
    (layout.ao / "sessions" / "2026-03-02-docs-aa11bb2.md").write_text(
        "---\nsession_id: aa11bb22\ndate: 2026-03-02\ntags: [olympus, session, 2026-03]\n---\n\nDocs pass.\n",
        encoding="utf-8",
    )
    return layout


def test_every_session_file_is_read_and_bad_lines_are_reported(layout: AgentsLayout) -> None:
    problems = Problems()
    records = list(all_sessions(layout, problems))
    assert [(r.source.name, r.session_id) for r in records] == [
        ("pending.jsonl", "5f0c1d2e"),
        ("sessions.jsonl", "5f0c1d2e"),
        ("2026-03-01-broker-5f0c1d2.jsonl", "5f0c1d2e"),
        ("2026-03-02-docs-aa11bb2.md", "aa11bb22"),
    ]
    queue, index, summary, markdown = records
    assert (
        queue.transcript_path == TRANSCRIPT and len(queue.decisions) == 2 and queue.date is not None
    )
    assert index.session_path.endswith(".md") and summary.files_changed == ["a.py"]
    assert summary.extra["tool_calls"] == {"Bash": 3}
    assert markdown.summary == "Docs pass." and markdown.tags == ["olympus", "session", "2026-03"]
    assert len(problems.items) == 2 and all("pending.jsonl:" in p for p in problems.items)
    assert problems.items[0].endswith("pending.jsonl:2: not a JSON object")
    assert "pending.jsonl:3: invalid JSON" in problems.items[1]


def test_snippets_lose_their_cut_words() -> None:
    assert tidy_snippet("...til the lock is taken first, so...") == "the lock is taken first,"
    assert tidy_snippet("Keep Redis as the broker.") == "Keep Redis as the broker."


def test_the_queue_is_forged_once(layout: AgentsLayout, tmp_path: Path) -> None:
    locks = LocalLocks(tmp_path / "locks")
    snippets = [(kind, text) for _, kind, text in queued_snippets(layout)]
    assert [k for k, _ in snippets] == ["decision", "decision", "learning"]
    result = forge_queue(layout, locks)
    assert result.status == "forged" and result.report["problems"]
    kinds = sorted(c.type for c in result.found)
    assert kinds == ["decision", "learning"]  # the narration snippet was not kept
    blocks = parse_learning_blocks(Path(str(result.pending_file)).read_text(encoding="utf-8"))
    assert {b.fields["session"] for b in blocks} == {"5f0c1d2e"}
    assert {b.fields["transcript"] for b in blocks} == {str(layout.ao / "pending.jsonl")}
    assert any("<per swarm>" in b.body for b in blocks)  # Go's \u003c escapes decoded
    assert forge_queue(layout, locks).status == "unchanged"
    assert forge_queue(layout, locks, force=True).status == "nothing-new"
    assert forge_queue(AgentsLayout(tmp_path / "empty" / ".agents"), locks).status == "absent"


def test_the_session_files_name_the_transcripts_to_forge(
    layout: AgentsLayout, tmp_path: Path
) -> None:
    from swarmq.flywheel.sessions import session_transcripts

    assert session_transcripts(layout) == []  # named, but not on this machine
    real = tmp_path / "t.jsonl"
    real.write_text("{}\n", encoding="utf-8")
    (layout.ao / "index" / "sessions.jsonl").write_text(
        json.dumps({"session_id": "s1", "transcript_path": str(real)})
        + "\n"
        + json.dumps({"session_id": "s2", "transcript_path": str(real)})
        + "\n",
        encoding="utf-8",
    )
    assert session_transcripts(layout) == [real.resolve()]


def test_the_close_loop_forges_the_queue_first(layout: AgentsLayout, tmp_path: Path) -> None:
    locks = LocalLocks(tmp_path / "locks")
    first = close_loop_with_queue(layout, locks, ForgeConfig(), FlywheelConfig())
    assert first.queue["status"] == "forged" and first.queue["new"] == 2
    assert (
        first.ingest["added"] == 2
    )  # the queue's two kept snippets reached the pool in the same pass
    assert any(p.startswith("ao queue: ") and "pending.jsonl:2" in p for p in first.problems)
    again = close_loop_with_queue(layout, locks, ForgeConfig(), FlywheelConfig())
    assert again.queue["status"] == "unchanged" and again.ingest["added"] == 0
    assert again.as_dict()["queue"]["status"] == "unchanged"
