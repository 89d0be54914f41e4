"""AgentOps' session-side files, read in full (see the flywheel reference §8).

* ``.agents/ao/pending.jsonl``: the session-close queue, one line per session with its
  ``summary`` and the ``decisions`` / ``knowledge`` snippets AgentOps cut out of the transcript
  (truncated with ``...`` and often starting mid-word, because they are cut at keyword matches);
* ``.agents/ao/index/sessions.jsonl``: ``{session_id, date, session_path, summary}`` per session;
* ``.agents/ao/sessions/*.jsonl`` and their ``.md`` twins: per-session summaries with files
  changed, issues and tool counts.

Readers stream, keep every field they know, and report lines they cannot use (``problems``, with
file and line) instead of dropping them silently. :func:`queued_snippets` turns the queue's
snippets into tidy text for forge's classifier (the cut-off word at either end removed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel.content import parse_front_matter, split_front_matter
from swarmq.flywheel.model import parse_time
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.jsonl import CorruptLine, JsonlLine, iter_jsonl


def pending_queue_path(layout: AgentsLayout) -> Path:
    return layout.ao / "pending.jsonl"


def session_index_path(layout: AgentsLayout) -> Path:
    return layout.ao / "index" / "sessions.jsonl"


def sessions_dir(layout: AgentsLayout) -> Path:
    return layout.ao / "sessions"


@dataclass
class SessionRecord:
    """One session as any of the three files describes it."""

    session_id: str
    source: Path
    line_no: int
    date: datetime | None = None
    summary: str = ""
    session_path: str = ""
    transcript_path: str = ""
    decisions: list[str] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Problems:
    """Lines that could not be used, with where they are."""

    items: list[str] = field(default_factory=list)

    def add(self, path: Path, line_no: int, error: str) -> None:
        self.items.append(f"{path}:{line_no}: {error}")


_KNOWN = frozenset(
    {
        "session_id",
        "date",
        "queued_at",
        "summary",
        "session_path",
        "transcript_path",
        "decisions",
        "knowledge",
        "files_changed",
        "issues",
        "tags",
    }
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _record(value: dict[str, Any], source: Path, line_no: int) -> SessionRecord | str:
    session = value.get("session_id")
    if not isinstance(session, str) or not session.strip():
        return "no session_id"
    return SessionRecord(
        session,
        source,
        line_no,
        parse_time(value.get("date") or value.get("queued_at")),
        str(value.get("summary") or ""),
        str(value.get("session_path") or ""),
        str(value.get("transcript_path") or ""),
        _strings(value.get("decisions")),
        _strings(value.get("knowledge")),
        _strings(value.get("files_changed")),
        _strings(value.get("issues")),
        _strings(value.get("tags")),
        {k: v for k, v in value.items() if k not in _KNOWN},
    )


def read_jsonl_sessions(path: Path, problems: Problems | None = None) -> Iterator[SessionRecord]:
    """The session records of one JSONL file (queue, index or a session file)."""
    for item in iter_jsonl(path):
        if isinstance(item, CorruptLine):
            if problems is not None:
                problems.add(path, item.line_no, item.error)
            continue
        assert isinstance(item, JsonlLine)
        if not isinstance(item.value, dict):
            if problems is not None:
                problems.add(path, item.line_no, "not a JSON object")
            continue
        record = _record(item.value, path, item.line_no)
        if isinstance(record, str):
            if problems is not None:
                problems.add(path, item.line_no, record)
            continue
        yield record


def read_session_markdown(path: Path) -> SessionRecord | None:
    """A session summary's ``.md`` twin: its front matter, the body as summary when absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines, body = split_front_matter(text)
    front = parse_front_matter(lines) if lines is not None else {}
    value = {**front, "summary": front.get("summary") or body.strip()}
    record = _record(value, path, 1)
    return record if isinstance(record, SessionRecord) else None


def all_sessions(layout: AgentsLayout, problems: Problems | None = None) -> Iterator[SessionRecord]:
    """Every session record of the queue, the index and the session files, in that order."""
    yield from read_jsonl_sessions(pending_queue_path(layout), problems)
    yield from read_jsonl_sessions(session_index_path(layout), problems)
    folder = sessions_dir(layout)
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.suffix == ".jsonl":
                yield from read_jsonl_sessions(path, problems)
            elif path.suffix == ".md" and not path.with_suffix(".jsonl").exists():
                record = read_session_markdown(path)
                if record is not None:
                    yield record
                elif problems is not None:
                    problems.add(path, 1, "no session_id in the front matter")


_ELLIPSIS = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")


def tidy_snippet(snippet: str) -> str:
    """A queue snippet without its ``...`` and without the word cut in half at either end."""
    text = " ".join(snippet.split())
    cut_start = text.startswith(("...", "…"))
    cut_end = text.endswith(("...", "…"))
    text = _ELLIPSIS.sub("", text).strip()
    if cut_start and " " in text:
        text = text.split(" ", 1)[1]
    if cut_end and " " in text:
        text = text.rsplit(" ", 1)[0]
    return text.strip()


def queued_snippets(
    layout: AgentsLayout, problems: Problems | None = None
) -> Iterator[tuple[SessionRecord, str, str]]:
    """``(session, kind, text)`` for each decision and knowledge snippet of the queue."""
    for record in read_jsonl_sessions(pending_queue_path(layout), problems):
        for kind, snippets in (("decision", record.decisions), ("learning", record.knowledge)):
            for snippet in snippets:
                text = tidy_snippet(snippet)
                if text:
                    yield record, kind, text


def session_transcripts(layout: AgentsLayout, problems: Problems | None = None) -> list[Path]:
    """The transcripts the session files name (``transcript_path``) that exist here, once each,
    in the order first named: what forge can mine for the sessions AgentOps recorded."""
    out: dict[Path, None] = {}
    for record in all_sessions(layout, problems):
        if record.transcript_path:
            path = Path(record.transcript_path).expanduser()
            if path.is_file():
                out.setdefault(path.resolve(), None)
    return list(out)
