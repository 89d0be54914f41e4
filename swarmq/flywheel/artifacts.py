"""Promoted learnings and patterns: writing them as AgentOps' ``Promote`` does, reading and
updating them as its maturity scanner does.

A learning is Markdown with YAML front matter, or JSONL whose first line is the learning object.
Reading applies the scanner's defaults (``id`` = file name, ``maturity`` = provisional,
``utility`` = ``confidence`` = 0.5, counters 0, floats truncated to int). Updating rewrites only
the keys it sets: Markdown front-matter lines are replaced in place or appended, the JSONL first
line is merged, every other line is kept as it was.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel.content import (
    WHAT_WE_LEARNED,
    canonical_content_body,
    read_front_matter,
    split_front_matter,
    update_front_matter,
)
from swarmq.flywheel.model import INITIAL_UTILITY, Maturity, parse_time
from swarmq.storage.boundedjson import loads_bounded

HEADINGS = {
    "learning": "# Learning: ",
    "decision": "# Decision: ",
    "solution": "# Solution: ",
    "failure": "# Failure: ",
    "reference": "# Reference: ",
}


def truncate_at_word(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut


def title_line(content: str) -> str:
    """First line of the content without a Markdown heading or a ``Learning:`` label (pending
    blocks open with ``# Learning: …``); cut at a word boundary past 80 characters."""
    line = next((text for text in content.split("\n") if text.strip()), "")
    line = line.strip().lstrip("#").strip()
    for label in ("Learning:", "Decision:", "Solution:", "Failure:", "Reference:"):
        if line.startswith(label):
            line = line[len(label) :].strip()
    return truncate_at_word(line, 77) + "..." if len(line) > 80 else line


_PENDING_FIELD = re.compile(r"^\*\*[A-Za-z][A-Za-z ]*:?\*\*:?")
_SECTION = re.compile(r"^##[ \t]+(.+?)[ \t]*$")


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """A candidate's content with the pending-block wrapper taken off."""

    body: str
    """What was learned (the last ``## What We Learned`` section, else the remaining text)."""
    sections: list[tuple[str, str]]
    """Other ``## `` sections of the block (e.g. ``Why It Matters``), in order."""
    source_notes: str
    """The text of the block's own ``## Source`` section (folded into the artifact's)."""


def unwrap_pending(content: str) -> Unwrapped:
    """Take a pending block apart: drop its ``# Learning:`` heading and ``**Field**:`` lines,
    keep the What We Learned text as the body (the content hash's canonical body, so candidate
    and artifact hash alike) and every other section by name, so the artifact holds each once."""
    _, text = split_front_matter(content)
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        heading = _SECTION.match(line.strip())
        if heading:
            sections.append((heading.group(1), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    kept = [
        line
        for line in preamble
        if not (line.lstrip().startswith("# ") or _PENDING_FIELD.match(line.strip()))
    ]
    named = [(name, "\n".join(lines).strip()) for name, lines in sections]
    learned = [text for name, text in named if name == WHAT_WE_LEARNED[3:] and text]
    source = "\n\n".join(text for name, text in named if name == "Source" and text)
    others = [
        (name, text) for name, text in named if name not in (WHAT_WE_LEARNED[3:], "Source") and text
    ]
    rest = "\n".join(kept).strip()
    if not learned:  # not a pending block: the text stands as it is (and hashes alike)
        return Unwrapped(canonical_content_body(content), [], "")
    if rest:
        others.insert(0, ("Notes", rest))
    return Unwrapped(learned[-1], others, source)


def render_artifact(candidate: dict[str, Any], promoted_on: datetime) -> str:
    """The promoted artifact in AgentOps' learning format (front-matter keys in its order),
    with the pending block's wrapper taken off so each section appears once."""
    raw_source = candidate.get("source")
    source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
    session = str(source.get("session_id") or "")
    ctype = str(candidate.get("type") or "")
    raw_content = str(candidate.get("content") or "")
    unwrapped = unwrap_pending(raw_content)
    content = unwrapped.body
    lines = [
        "---",
        f"id: {candidate.get('id')}",
        f"type: {ctype}",
        f"date: {promoted_on.strftime('%Y-%m-%d')}",
        f"tier: {candidate.get('tier')}",
        f"utility: {_float(candidate.get('utility'), INITIAL_UTILITY):.4f}",
        f"confidence: {_float(candidate.get('confidence'), 0.0):.4f}",
        f"maturity: {candidate.get('maturity') or Maturity.PROVISIONAL.value}",
        f"reward_count: {_int(candidate.get('reward_count'))}",
        f"helpful_count: {_int(candidate.get('helpful_count'))}",
        f"harmful_count: {_int(candidate.get('harmful_count'))}",
        f"source_session: {session or 'unknown'}",
        "---",
        "",
        HEADINGS.get(ctype, "# Knowledge: ") + title_line(raw_content),
        "",
        WHAT_WE_LEARNED,
        "",
        content,
        "",
    ]
    for name, text in unwrapped.sections:
        lines += [f"## {name}", "", text, ""]
    context = str(candidate.get("context") or "")
    if context:
        lines += ["## Context", "", context, ""]
    lines += ["## Source", ""]
    if session:
        lines += [
            f"- **Session**: {session}",
            f"- **Transcript**: {source.get('transcript_path', '')}",
            f"- **Message**: {_int(source.get('message_index'))}",
            "",
        ]
    else:
        lines += ["- **Source**: unknown", ""]
    if unwrapped.source_notes:
        lines += [unwrapped.source_notes, ""]
    return "\n".join(lines) + "\n"


@dataclass
class Learning:
    """A learning's scanner view plus its raw text (for rewrites)."""

    path: Path
    fields: dict[str, Any]
    text: str

    @property
    def id(self) -> str:
        value = self.fields.get("id")
        return str(value) if value not in (None, "") else self.path.name

    @property
    def maturity(self) -> str:
        value = self.fields.get("maturity")
        # Hand-written files say "Provisional"; values no rule knows ("accepted") stay as they are.
        return (
            value.strip().lower()
            if isinstance(value, str) and value.strip()
            else Maturity.PROVISIONAL.value
        )

    @property
    def utility(self) -> float:
        return _float(self.fields.get("utility"), INITIAL_UTILITY)

    @property
    def confidence(self) -> float:
        return _float(self.fields.get("confidence"), 0.5)

    def count(self, key: str) -> int:
        return _int(self.fields.get(key))

    @property
    def body(self) -> str:
        if self.path.suffix == ".jsonl":
            return str(self.fields.get("content") or self.fields.get("summary") or "")
        return canonical_content_body(self.text)

    def time(self, *keys: str) -> datetime | None:
        for key in keys:
            moment = parse_time(self.fields.get(key))
            if moment is not None:
                return moment
        return None


def read_learning(path: Path) -> Learning | None:
    """``None`` for a file that is not a learning (unreadable, empty)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return learning_from_text(path, text)


def learning_from_text(path: Path, text: str) -> Learning | None:
    first = text.split("\n", 1)[0].strip()
    if first.startswith("{"):
        try:
            value = loads_bounded(first)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return Learning(path, value, text)
    if first == "---" and split_front_matter(text)[0] is not None:
        return Learning(path, read_front_matter(text), text)
    if not text.strip():
        return None
    return Learning(path, {}, text)


def updated_text(learning: Learning, updates: dict[str, Any]) -> str:
    """The learning's text with ``updates`` applied, everything else untouched."""
    if learning.path.suffix == ".jsonl" and learning.text.lstrip().startswith("{"):
        _, sep, rest = learning.text.partition("\n")
        merged = {**learning.fields, **updates}
        return (
            json.dumps(dict(sorted(merged.items())), ensure_ascii=False, separators=(",", ":"))
            + sep
            + rest
        )
    return update_front_matter(learning.text, updates)


def learning_files(*directories: Path) -> list[Path]:
    """The learning files of each directory, sorted by name (one ``scandir`` per directory:
    lookup lists them on every query)."""
    out: list[Path] = []
    for directory in directories:
        try:
            with os.scandir(directory) as found:
                names = sorted(
                    item.name
                    for item in found
                    if item.name.endswith((".md", ".jsonl"))
                    and not item.name.startswith(".")
                    and item.is_file()
                )
        except FileNotFoundError:
            continue
        out += [directory / n for n in names]
    return out


def _float(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return default
        return default
    return float(value)


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return 0
    return 0
