"""Injection budgets and the ``<swarm_knowledge_directives>`` block.

Budget regimes follow opencode-swarm's context headroom rule: more than 60 % of the context
free → the full budget; 20–60 % → half the entries and half the characters; 5–20 % → a
quarter; under 5 % → nothing is injected. The block is opencode-swarm's YAML-ish record list,
with the retrieval trace id the acknowledgement markers must quote; whole records are dropped
from the end until it fits the character budget. An entry tagged ``provisional`` (a lesson the
flywheel published before anything confirmed it) says so in its record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.model import RetrievalMode
from swarmq.knowledge.query import Ranked

Regime = Literal["full", "half", "quarter", "skipped"]
OPEN_TAG = "<swarm_knowledge_directives>"
CLOSE_TAG = "</swarm_knowledge_directives>"
ACK_HINT = "ack: KNOWLEDGE_APPLIED|N_A|IGNORED|CONTRADICTED|VIOLATED:<trace_id>:<id> [reason=...]"
PROVISIONAL_TAG = "provisional"
PROVISIONAL_LINE = "  provisional: not yet confirmed by use"


@dataclass(frozen=True, slots=True)
class Budget:
    regime: Regime
    max_entries: int
    max_chars: int


def budget_for(
    headroom: float, config: KnowledgeConfig, mode: RetrievalMode = RetrievalMode.PHASE_START
) -> Budget:
    """The budget for a context whose free fraction is ``headroom`` (0.0-1.0)."""
    count = (
        config.delegate_max_inject_count
        if mode == RetrievalMode.DELEGATION
        else config.max_inject_count
    )
    chars = config.inject_char_budget
    if headroom > 0.6:
        return Budget("full", count, chars)
    if headroom >= 0.2:
        return Budget("half", max(1, count // 2) if count else 0, chars // 2)
    if headroom >= 0.05:
        return Budget("quarter", max(1, count // 4) if count else 0, chars // 4)
    return Budget("skipped", 0, 0)


_ZERO_WIDTH = re.compile("[\u200b-\u200d\ufeff\u202a-\u202e\u2066-\u2069]")
_SYSTEM = re.compile(r"^system\s*:", re.IGNORECASE | re.MULTILINE)


def sanitize(text: str) -> str:
    """opencode-swarm's ``sanitizeLessonForContext``, plus newlines folded so one field stays
    on one line of the block."""
    kept = "".join(c for c in text if c in "\t\n\r" or (ord(c) > 31 and ord(c) != 127))
    kept = _ZERO_WIDTH.sub("", kept).replace("```", "` ` `")
    kept = _SYSTEM.sub("[BLOCKED]:", kept)
    return " ".join(kept.split())


def clip(text: str, limit: int) -> str:
    """Display truncation (the stored lesson is never changed)."""
    return text if len(text) <= limit else text[:limit] + "…"


def to_fixed2(value: float) -> str:
    """JavaScript's ``toFixed(2)`` (ties on the exact binary value round up, not to even)."""
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def directive_record(ranked: Ranked, max_display: int) -> list[str]:
    entry = ranked.entry
    lines = [
        f"- id: {entry.id}",
        f"  confidence: {to_fixed2(entry.confidence)}",
        f"  priority: {entry.priority}",
        *([PROVISIONAL_LINE] if PROVISIONAL_TAG in entry.tags else []),
        f"  lesson: {clip(sanitize(entry.lesson), max_display)}",
    ]
    for label, key in (
        ("trigger", "triggers"),
        ("required", "required_actions"),
        ("forbidden", "forbidden_actions"),
    ):
        values = entry.strings(key)
        if values:
            lines.append(f"  {label}: {clip(sanitize(values[0]), max_display)}")
    if entry.generated_skill_path:
        lines.append(f"  skill: file:{sanitize(entry.generated_skill_path)}")
    checks = entry.strings("verification_checks")
    if checks:
        lines.append(f"  verification: {clip(sanitize(checks[0]), max_display)}")
    return lines


def render_directives(
    ranked: Sequence[Ranked], *, trace_id: str, budget: Budget, max_display: int
) -> tuple[str | None, list[Ranked]]:
    """The block and the entries it actually shows (``None`` when nothing fits)."""
    chosen = list(ranked[: budget.max_entries])
    records = [directive_record(r, max_display) for r in chosen]
    header = [OPEN_TAG, f"trace_id: {trace_id}", ACK_HINT]
    while records:
        block = "\n".join([*header, *(line for rec in records for line in rec), CLOSE_TAG])
        if len(block) <= budget.max_chars:
            return block, chosen[: len(records)]
        records.pop()
    return None, []
