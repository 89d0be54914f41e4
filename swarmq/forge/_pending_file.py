"""Forged candidates as an AgentOps pending file (``.agents/knowledge/pending/*.md``).

The file is what ``ao pool ingest`` reads: ``# Learning:`` blocks with ``**ID**``,
``**Category**`` and ``**Confidence**`` lines and a ``## What We Learned`` section. swarmq adds
the source span (``**Session**``, ``**Transcript**``, ``**Message**``, ``**Line**``,
``**Timestamp**``) and openknowledge's ``**Class**``; AgentOps ignores lines it does not know.
The name is derived from the candidates' hashes, so writing the same candidates twice lands on
the same file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from swarmq.flywheel.model import rfc3339


@dataclass(frozen=True, slots=True)
class ForgedCandidate:
    """A typed candidate with the span of the transcript it came from."""

    content: str
    type: str
    knowledge_class: str | None
    confidence: float
    transcript: str
    message_index: int
    line_no: int
    timestamp: str | None
    session_id: str | None
    role: str
    content_hash: str
    extractor: str = "rules"

    @property
    def learning_id(self) -> str:
        return f"f-{self.content_hash[:12]}"

    @property
    def title(self) -> str:
        return title_of(self.content)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.learning_id,
            "type": self.type,
            "class": self.knowledge_class,
            "confidence": self.confidence,
            "title": self.title,
            "message_index": self.message_index,
            "line": self.line_no,
            "timestamp": self.timestamp,
            "session_id": self.session_id,
            "role": self.role,
            "content_hash": self.content_hash,
            "extractor": self.extractor,
        }


_MARKER = re.compile(r"^(?:[-*+•>#]+|\d{1,3}[.)]|\(?[a-z][.)])\s+")
_SENTENCE = re.compile(r"(?<=[a-z0-9)`'\"][.!?])\s(?=\S)|(?<=[。！？])", re.IGNORECASE)
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|no|fig)\.|\b[A-Z]\.)$", re.IGNORECASE
)
TITLE_CHARS = 80


def title_of(content: str) -> str:
    """A candidate's title: its first sentence without a list marker ("1.", "-"), never a bare
    number, cut at a word boundary (with an ellipsis) when longer than 80 characters."""
    text = " ".join(content[:400].split())  # a title never needs more than its first sentence
    while _MARKER.match(text):
        text = _MARKER.sub("", text, count=1)
    first = text
    for match in _SENTENCE.finditer(text):
        head = text[: match.start()].rstrip()
        if len(head) >= 12 and not _ABBREVIATION.search(head):
            first = head
            break
    if len(first) <= TITLE_CHARS:
        return first or text[:TITLE_CHARS]
    cut = first[: TITLE_CHARS - 3]
    boundary = max(cut.rfind(" "), cut.rfind("/"), cut.rfind(","), cut.rfind(";"))
    if boundary >= TITLE_CHARS // 2:
        cut = cut[:boundary]  # else one long token (a path, CJK text): no boundary to cut at
    return cut.rstrip(" ,;:/") + "..."


def confidence_word(confidence: float) -> str:
    """AgentOps' declared confidence, which adds 0.15 (high) or 0.07 (medium) to the score."""
    if confidence >= 0.85:
        return "high"
    if confidence >= 0.7:
        return "medium"
    return "low"


def pending_name(candidates: list[ForgedCandidate], now: datetime) -> str:
    """``<date>-forge-<hash of the candidates>.md``: short, because AgentOps builds pool ids
    from the file name (twice, when the file has no ``ag-`` session token)."""
    digest = hashlib.sha256(
        "".join(sorted(c.content_hash for c in candidates)).encode()
    ).hexdigest()[:10]
    return f"{now.astimezone(UTC).strftime('%Y-%m-%d')}-forge-{digest}.md"


def render_pending(
    transcript: Path,
    fmt: str,
    session_id: str | None,
    candidates: list[ForgedCandidate],
    now: datetime,
) -> str:
    head = [
        "---",
        f"date: {now.astimezone(UTC).strftime('%Y-%m-%d')}",
        f"forged_at: {rfc3339(now)}",
        "source: swarmq-forge",
        f"transcript: {transcript}",
        f"format: {fmt}",
        f"session_id: {session_id or 'unknown'}",
        "---",
        "",
    ]
    blocks = []
    for cand in candidates:
        lines = [
            f"# Learning: {cand.title}",
            "",
            f"**ID**: {cand.learning_id}",
            f"**Category**: {cand.type}",
            f"**Confidence**: {confidence_word(cand.confidence)}",
        ]
        if cand.knowledge_class:
            lines.append(f"**Class**: {cand.knowledge_class}")
        lines += [
            f"**Session**: {cand.session_id or session_id or 'unknown'}",
            f"**Transcript**: {transcript}",
            f"**Message**: {cand.message_index}",
            f"**Line**: {cand.line_no}",
        ]
        if cand.timestamp:
            lines.append(f"**Timestamp**: {cand.timestamp}")
        if cand.extractor != "rules":
            lines.append(f"**Extractor**: {cand.extractor}")
        lines += [
            "",
            "## What We Learned",
            "",
            cand.content.strip(),
            "",
            "## Source",
            "",
            f"Forged by swarmq from the {cand.role} message {cand.message_index} (line "
            f"{cand.line_no}) of {transcript.name}, classifier confidence {cand.confidence:.2f}.",
            "",
        ]
        blocks.append("\n".join(lines))
    return "\n".join(head) + "\n".join(blocks)
