"""One-time import of the legacy ``.swarm/context.md`` into the swarm tier.

Bullets (``- `` or ``* ``) under the *Lessons Learned*, *Patterns*, *SME Cache* and *Decisions*
headings become entries through the normal add path (validation, near-duplicate collapse);
invalid ones land in the rejected file. The sentinel ``.swarm/.knowledge-migrated`` makes the
migration idempotent.
"""

from __future__ import annotations

import re
from typing import Any

from swarmq.knowledge.files import MIGRATION_SENTINEL
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.knowledge.tags import infer_category, infer_tags
from swarmq.storage.atomic import write_json_atomic

SECTIONS = {
    "lessons-learned": "process",
    "patterns": "architecture",
    "sme-cache": "other",
    "decisions": "architecture",
}
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*]\s+(.+?)\s*$")
_KEYWORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(rf"\b(?:{words})\b", re.IGNORECASE))
    for category, words in (
        ("todo", "todo|remember"),
        ("security", "security|auth|token|password|secret|encrypt"),
        ("testing", "tests?|spec|vitest|jest|pytest|coverage"),
        ("performance", "performance|latency|throughput|cache|slow"),
        ("debugging", "debug|bug|stack trace|error|crash"),
        ("tooling", "lint|linter|build|tooling|docker|cli|npm|pnpm|bun"),
        ("architecture", "architecture|design|module|layer|boundary|schema"),
        ("integration", "integration|api|endpoint|webhook"),
    )
)


def section_key(title: str) -> str | None:
    slug = re.sub(r"[^a-z]+", "-", title.lower()).strip("-")
    for key in SECTIONS:
        if slug.startswith(key):
            return key
    return None


def infer_category_from_text(text: str, section: str) -> str:
    """The category a migrated bullet gets: inferred tags first, then keywords, then the
    section's default."""
    category = infer_category(text, infer_tags(text))
    if category != "process":
        return category
    for name, pattern in _KEYWORDS:
        if pattern.search(text):
            return name
    return SECTIONS[section]


def legacy_bullets(markdown: str) -> list[tuple[str, str]]:
    """``(section, text)`` for every bullet under a known heading, in document order."""
    out: list[tuple[str, str]] = []
    section: str | None = None
    for line in markdown.splitlines():
        heading = _HEADING.match(line)
        if heading:
            section = section_key(heading.group(1))
            continue
        bullet = _BULLET.match(line)
        if bullet and section is not None:
            out.append((section, bullet.group(1)))
    return out


def migrate(knowledge: KnowledgeStore, *, force: bool = False) -> dict[str, Any]:
    """Import ``.swarm/context.md`` once; returns counts (``skipped`` when already done)."""
    sentinel = knowledge.swarm_dir / MIGRATION_SENTINEL
    source = knowledge.swarm_dir / "context.md"
    if sentinel.exists() and not force:
        return {"skipped": True, "reason": f"{sentinel} exists"}
    if not source.is_file():
        return {"skipped": True, "reason": f"{source} does not exist"}
    bullets = legacy_bullets(source.read_text(encoding="utf-8", errors="replace"))
    lessons = [
        NewLesson(
            text,
            category=infer_category_from_text(text, section),
            auto_generated=False,
            extra={"source_refs": [f".swarm/context.md#{section}"]},
        )
        for section, text in bullets
    ]
    results = knowledge.swarm.add_many(lessons)
    counts = {"imported": 0, "duplicates": 0, "rejected": 0}
    for result in results:
        key = {"added": "imported", "rejected": "rejected"}.get(result.outcome, "duplicates")
        counts[key] += 1
    summary = {
        "migrated_at": knowledge.swarm.now(),
        "source": str(source),
        "bullets": len(bullets),
        **counts,
    }
    write_json_atomic(sentinel, summary)
    return {"skipped": False, **summary}
