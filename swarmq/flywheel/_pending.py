"""Reading AgentOps pending learnings (``.agents/knowledge/pending/*.md``).

A file holds one or more blocks, each opening with ``# Learning: <title>`` and carrying
``**ID**:``, ``**Category**:`` and ``**Confidence**:`` lines; a file without such a heading may
be a legacy ``/learn`` capture (front matter with ``type:`` plus a heading). Blocks forged by
swarmq also carry their source span (``**Session**``, ``**Transcript**``, ``**Message**``,
``**Timestamp**``, ``**Class**``), which ingest keeps on the candidate.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from swarmq.flywheel.content import parse_front_matter, split_front_matter
from swarmq.flywheel.model import parse_time

_HEADER = re.compile(r"^# Learning:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_FRONT = re.compile(r"^---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_DATE_MD = re.compile(r"^\*\*Date:?\*\*:?\s*(\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)
_DATE_YAML = re.compile(r"^date:\s*(\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)
_SESSION_HINT = re.compile(r"\bag-[a-z0-9]+\b", re.ASCII)


def _field(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\*\*{name}:?\*\*:?[ \t]*(.+?)[ \t]*$", re.MULTILINE)


_FIELDS = {
    key: _field(label)
    for key, label in {
        "id": "ID",
        "category": "Category",
        "confidence": "Confidence",
        "session": "Session",
        "transcript": "Transcript",
        "message": "Message",
        "timestamp": "Timestamp",
        "class": "Class",
        "line": "Line",
        "signature": "Signature",
    }.items()
}


@dataclass
class LearningBlock:
    title: str
    body: str
    id: str = ""
    category: str = ""
    confidence: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    """Every recognised ``**Field**:`` line of the block (lower-case keys)."""


def parse_learning_blocks(markdown: str) -> list[LearningBlock]:
    """Every ``# Learning:`` block, or the single legacy front-matter learning, or none."""
    starts = list(_HEADER.finditer(markdown))
    if not starts:
        legacy = parse_legacy_learning(markdown)
        return [legacy] if legacy is not None else []
    blocks = []
    for number, match in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(markdown)
        body = markdown[match.start() : end].strip()
        found = {}
        for key, pattern in _FIELDS.items():
            hit = pattern.search(body)
            if hit:
                found[key] = hit.group(1).strip()
        blocks.append(
            LearningBlock(
                match.group(1).strip(),
                body,
                found.get("id", ""),
                found.get("category", ""),
                found.get("confidence", ""),
                found,
            )
        )
    return blocks


def parse_legacy_learning(markdown: str) -> LearningBlock | None:
    lines, body = split_front_matter(markdown)
    if lines is None or _FRONT.match(markdown) is None:
        return None
    body = body.strip()
    front = parse_front_matter(lines)
    category = str(front.get("type") or "").strip()
    title = first_heading_text(body)
    if not body or not category or not title:
        return None
    return LearningBlock(
        title,
        body,
        str(front.get("id") or "").strip() or "legacy",
        category,
        str(front.get("confidence") or "").strip() or "medium",
    )


def first_heading_text(body: str) -> str:
    for line in body.split("\n"):
        text = line.strip()
        if text:
            text = text.lstrip("#").strip() if text.startswith("#") else text
            if text:
                return text
    return ""


def file_date(markdown: str, path: Path) -> datetime:
    """Front matter ``forged_at:`` (swarmq) or ``date:``, a ``**Date**:`` line, a
    ``YYYY-MM-DD`` file-name prefix, the file's mtime, or now: the first that exists."""
    front = _FRONT.match(markdown)
    if front:
        forged = re.search(r"^forged_at:\s*(\S+)\s*$", front.group(1), re.MULTILINE)
        if forged and (moment := parse_time(forged.group(1).strip("\"'"))):
            return moment
        hit = _DATE_YAML.search(front.group(1))
        if hit and (moment := parse_time(hit.group(1))):
            return moment
    hit = _DATE_MD.search(markdown)
    if hit and (moment := parse_time(hit.group(1))):
        return moment
    if len(path.name) >= 10 and (moment := parse_time(path.name[:10])):
        return moment
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return datetime.now(UTC)


def session_hint(markdown: str, path: Path) -> str:
    """The first ``ag-…`` token in the first 2 KB, else the file's base name."""
    hit = _SESSION_HINT.search(markdown[:2048])
    return hit.group(0) if hit else path.stem


def slugify(text: str) -> str:
    out: list[str] = []
    dash = False
    for char in text.lower():
        if "a" <= char <= "z" or "0" <= char <= "9":
            out.append(char)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    return "".join(out).strip("-") or "cand"


def candidate_id(path: Path, hint: str, block: LearningBlock) -> str:
    """``pend-<file base>[-<session hint>][-<learning id>]``, shortened with a body hash if long.

    As current AgentOps builds it: the session hint is left out when it is the file base (or
    part of it), and the learning id when the parts before it already hold it, so a pending
    file without an ``ag-…`` session token does not name its base twice in every candidate id
    (and in every promoted learning's file name), and a file already named ``pend-…`` is not
    prefixed again. Ids already in a pool keep working: an id is only ever looked up as a whole.
    """
    base = path.stem
    learning = block.id.strip().lower() or "noid"
    parts = [base]
    if hint and hint != base and hint not in base:
        parts.append(hint)
    if learning != "noid" and learning not in "-".join(parts):
        parts.append(learning)
    ident = slugify("-".join(parts))
    while ident.startswith("pend-pend-"):
        ident = ident.removeprefix("pend-")
    if ident != "pend" and not ident.startswith("pend-"):
        ident = slugify("pend-" + ident)
    if len(ident) > 120:
        digest = hashlib.sha256(block.body.encode("utf-8")).hexdigest()[:8]
        ident = slugify(ident[:90] + "-" + digest)
    return ident


def is_malformed(block: LearningBlock) -> bool:
    return (
        not block.title.strip()
        or not block.body.strip()
        or "no significant learnings" in block.body.lower()
    )
