"""Every transcript reader on the real-shaped fixtures and on hand-made edge cases."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from swarmq.transcripts.detect import TranscriptFormatError, detect_format
from swarmq.transcripts.model import MessageKind, TranscriptFormat
from swarmq.transcripts.reader import open_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude-code" / "session-v2.0.jsonl"
CODEX = (
    FIXTURES / "codex" / "rollout-2026-03-04T08-00-00-019c9e21-4b7a-7d10-8c3e-5f1a2b3c4d5e.jsonl"
)
LEGACY = FIXTURES / "codex" / "rollout-legacy-2025-08-21.jsonl"


def read(path: Path, fmt: str | None = None, **options: int):  # type: ignore[no-untyped-def]
    transcript = open_transcript(path, fmt, **options)
    return transcript, list(transcript.messages())


def test_claude_code_session() -> None:
    transcript, messages = read(CLAUDE)
    report = transcript.report
    assert transcript.format is TranscriptFormat.CLAUDE_CODE
    assert report.session_id == "7d3f2c1a-5b6e-4f80-9a1b-2c3d4e5f6a7b"
    assert [m.index for m in messages] == list(range(len(messages)))
    kinds = [m.kind for m in messages]
    assert kinds.count(MessageKind.SUMMARY) == 1
    assert kinds.count(MessageKind.COMPACTION) == 1
    assert kinds.count(MessageKind.THINKING) == 1
    assert kinds.count(MessageKind.TOOL_USE) == 3
    assert kinds.count(MessageKind.TOOL_RESULT) == 3
    assert kinds.count(MessageKind.SYSTEM) == 1
    sidechain = [m for m in messages if m.is_sidechain]
    assert len(sidechain) == 2 and sidechain[1].text.startswith("Lesson learned")
    meta = [m for m in messages if m.is_meta]
    assert len(meta) == 1 and "<system-reminder>" in meta[0].text
    tool = next(m for m in messages if m.kind is MessageKind.TOOL_USE)
    assert tool.tool_name == "Bash" and "visibility_timeout" in tool.text
    root_cause = next(m for m in messages if m.text.startswith("Root cause"))
    assert root_cause.line_no == 8 and root_cause.timestamp == "2026-03-02T09:14:12.880Z"
    # bookkeeping records are known, the invented one is reported, nothing is fatal
    assert report.record_types["file-history-snapshot"] == 1
    assert report.record_types["queue-operation"] == 1
    assert dict(report.unknown_types) == {"x-experimental-telemetry": 1}
    assert report.malformed == 0 and not report.truncated_last_line
    assert report.messages == len(messages) and report.lines == 25


def test_claude_code_truncated_last_line() -> None:
    transcript, messages = read(FIXTURES / "claude-code" / "truncated.jsonl")
    assert len(messages) == 2
    assert transcript.report.truncated_last_line
    assert transcript.report.malformed == 1
    assert transcript.report.problems[0].line_no == 3
    assert "truncated" in transcript.report.problems[0].error


def test_codex_rollout_current_form() -> None:
    transcript, messages = read(CODEX)
    report = transcript.report
    assert transcript.format is TranscriptFormat.CODEX_ROLLOUT
    assert report.session_id == "019c9e21-4b7a-7d10-8c3e-5f1a2b3c4d5e"
    texts = [(m.role, m.text) for m in messages if m.kind is MessageKind.TEXT and not m.is_meta]
    # each event_msg twin of a response_item message is dropped; the lone agent_message stays
    assert [role for role, _ in texts] == ["user", "assistant", "assistant"]
    assert texts[1][1].startswith("We chose to write the artifact first")
    assert sum(1 for m in messages if m.is_meta) == 2  # developer + environment_context
    assert [m.kind for m in messages].count(MessageKind.COMPACTION) == 1
    assert [m.tool_name for m in messages if m.kind is MessageKind.TOOL_USE] == [
        "exec_command",
        "apply_patch",
    ]
    assert dict(report.unknown_types) == {"response_item:x_new_item_kind": 1, "x_future_record": 1}
    assert report.record_types["turn_context"] == 1 and report.record_types["event_msg"] == 7
    assert all(m.session_id == report.session_id for m in messages)


def test_codex_rollout_legacy_form_with_state_records() -> None:
    transcript, messages = read(LEGACY)
    report = transcript.report
    assert transcript.format is TranscriptFormat.CODEX_ROLLOUT
    assert report.session_id == "3b2f7c1e-8a9d-4e6f-b1c2-d3e4f5a6b7c8"
    assert report.record_types["state"] == 3
    assert report.record_types["session_meta"] == 1
    assert report.truncated_last_line and report.malformed == 1
    assert messages[-1].role == "assistant" and "os.listdir" in messages[-1].text
    assert messages[0].is_meta  # <environment_context>


def test_codex_history() -> None:
    transcript, messages = read(FIXTURES / "codex" / "history.jsonl")
    assert transcript.format is TranscriptFormat.CODEX_HISTORY
    assert len(messages) == 3  # the empty prompt is not a message
    assert transcript.report.malformed == 1 and transcript.report.problems[0].line_no == 3
    assert messages[0].timestamp == "2026-03-04T08:00:00Z"
    assert messages[2].session_id == "019ca000-0000-7000-8000-000000000002"


def test_markdown_speakers_paragraphs_and_fences() -> None:
    transcript, messages = read(FIXTURES / "markdown" / "session-notes.md")
    assert transcript.format is TranscriptFormat.MARKDOWN
    roles = {m.text.split()[0]: m.role for m in messages}
    assert roles["Can"] == "user" and roles["Root"] == "assistant" and roles["Great,"] == "user"
    fenced = [m for m in messages if m.text.startswith("```python")]
    assert len(fenced) == 1 and fenced[0].text.endswith("```")
    assert not transcript.report.truncated_last_line


def test_unknown_records_and_malformed_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = {
        "type": "user",
        "sessionId": "s1",
        "uuid": "u1",
        "message": {"role": "user", "content": "hello there"},
    }
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                "[1, 2]",
                json.dumps({"type": "brand-new", "sessionId": "s1", "uuid": "u2"}),
                json.dumps({"no_type": True}),
                "",
                json.dumps({**good, "uuid": "u3"}),
            ]
        )
        + "\r\n",
        encoding="utf-8",
    )
    transcript, messages = read(path)
    assert len(messages) == 2
    report = transcript.report
    assert report.malformed == 2
    assert [p.line_no for p in report.problems] == [2, 3]
    assert report.unknown_types == {"brand-new": 1, "<no type>": 1}


def test_overlong_line_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    line = {
        "type": "user",
        "sessionId": "s",
        "uuid": "u",
        "message": {"role": "user", "content": "x" * 5000},
    }
    small = {
        "type": "user",
        "sessionId": "s",
        "uuid": "v",
        "message": {"role": "user", "content": "fine"},
    }
    path.write_text(json.dumps(small) + "\n" + json.dumps(line) + "\n" + json.dumps(small) + "\n")
    transcript, messages = read(path, max_line_bytes=1024)
    assert [m.text for m in messages] == ["fine", "fine"]
    assert (
        transcript.report.malformed == 1 and "exceeds 1024" in transcript.report.problems[0].error
    )


def test_detection() -> None:
    assert detect_format(CLAUDE) is TranscriptFormat.CLAUDE_CODE
    assert detect_format(LEGACY) is TranscriptFormat.CODEX_ROLLOUT


def test_detection_edge_cases(tmp_path: Path) -> None:
    torn_first = tmp_path / "a.jsonl"
    torn_first.write_text(
        '{"type":"session_me\n'
        + json.dumps(
            {
                "timestamp": "t",
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": []},
            }
        )
        + "\n"
    )
    assert detect_format(torn_first) is TranscriptFormat.CODEX_ROLLOUT
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert detect_format(empty) is TranscriptFormat.MARKDOWN
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"level":"info","msg":"started"}\n')
    with pytest.raises(TranscriptFormatError, match=r"foreign\.jsonl"):
        detect_format(foreign)
    with pytest.raises(FileNotFoundError):
        open_transcript(tmp_path / "missing.jsonl")


def test_streaming_memory_is_flat(tmp_path: Path) -> None:
    """A 12 MB transcript is read with a peak far below its size: one read block and the
    record at hand, nothing that accumulates."""
    path = tmp_path / "large.jsonl"
    record = {
        "type": "assistant",
        "sessionId": "s",
        "uuid": "u",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "We decided to use Redis. " * 40}],
        },
    }
    line = (json.dumps(record) + "\n").encode()
    with path.open("wb") as handle:
        for _ in range(12 * 1024 * 1024 // len(line)):
            handle.write(line)
    transcript = open_transcript(path)
    tracemalloc.start()
    count = sum(1 for _ in transcript.messages())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == transcript.report.messages > 10_000
    assert peak < 4_000_000, f"peak {peak} bytes while streaming a {path.stat().st_size} byte file"


@pytest.mark.parametrize("path", [CLAUDE, CODEX, LEGACY])
def test_skipping_kinds_keeps_every_index(path: Path) -> None:
    """Forge skips tool traffic without building it; the source spans must not shift."""
    _, full = read(path)
    skip = frozenset({MessageKind.TOOL_USE, MessageKind.TOOL_RESULT, MessageKind.THINKING})
    transcript = open_transcript(path)
    kept = list(transcript.messages(skip=skip))
    assert [(m.index, m.line_no, m.text) for m in kept] == [
        (m.index, m.line_no, m.text) for m in full if m.kind not in skip
    ]
    assert transcript.report.messages == len(full)


def test_every_line_parses_as_json_would(tmp_path: Path) -> None:
    """orjson parses each line; what it refuses (a BOM, NaN, an escaped lone surrogate, a broken
    record, a record nested past any parser's guard, a torn last line) is answered by json, so
    records and problems are json's. One difference, by design: an integer beyond 64 bits is
    read as a float, as JavaScript (Claude Code) reads and writes it."""
    from swarmq.transcripts._lines import iter_json_records
    from swarmq.transcripts.model import ReadReport

    lines = [
        '\ufeff{"type": "user", "n": 1}',
        '{"type": "user", "score": NaN}',
        '{"type": "user", "big": 1180591620717411303424}',
        '{"type": "user", "text": "half \\ud800 a pair"}',
        '{"type": "user", "text": "ok", "nested": {"a": [1, 2.5, null, true]}}',
        '{"type": "user", broken',
        "[" * 5000 + "]" * 5000,
        '["not", "an", "object"]',
        '{"type": "user", "torn": "no newl',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    report = ReadReport(path, TranscriptFormat.CLAUDE_CODE)
    records = list(iter_json_records(path, report))

    expected = [json.loads(line.lstrip("\ufeff")) for line in lines[:5]]
    expected[2]["big"] = float(expected[2]["big"])
    assert [number for number, _ in records] == [1, 2, 3, 4, 5]
    assert [json.dumps(value) for _, value in records] == [json.dumps(v) for v in expected]
    assert records[2][1]["big"] == float(2**70) and records[3][1]["text"] == "half \ud800 a pair"
    problems = {p.line_no: p.error for p in report.problems}
    assert problems[6].startswith("invalid JSON: Expecting property name")
    assert problems[7] == "invalid JSON: nested too deeply to parse"
    assert problems[8] == "expected a JSON object, got list"
    assert problems[9].startswith("truncated last line")
