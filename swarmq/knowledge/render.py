"""Injection budgets and the ``<swarm_knowledge_directives>`` block.

Budget regimes follow opencode-swarm's context headroom rule: more than 60 % of the context
free → the full budget; 20–60 % → half the entries and half the characters; 5–20 % → a
quarter; under 5 % → nothing is injected. The block is opencode-swarm's YAML-ish record list,
with the retrieval trace id the acknowledgement markers must quote; whole records are dropped
from the end until it fits the character budget. An entry tagged ``provisional`` (a lesson the
flywheel published before anything confirmed it) says so in its record.

Knowledge is data, never instructions: every field shown has its secrets redacted and anything
shaped like a tag (``</swarm_knowledge_directives>``, ``<system>``) escaped, so no lesson can
close or forge the block's markers, and an entry :func:`check_hostile` flags (one stored before
that check existed) is left out of the block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache, partial
from itertools import islice
from typing import Literal

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.model import RetrievalMode
from swarmq.knowledge.query import Ranked
from swarmq.knowledge.secrets import redacted
from swarmq.knowledge.validation import check_hostile

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


_DROPPED = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200d\ufeff\u202a-\u202e\u2066-\u2069]"
)
"""Control characters but tab and newlines, and zero-width and direction marks: one pass of a
compiled class (a per-character filter in Python was half of sanitize's time)."""
_SYSTEM = re.compile(r"^system\s*:", re.IGNORECASE | re.MULTILINE)
_TAG = re.compile(r"<(?=\s*/?\s*[A-Za-z_!?][\w:.-]*\s*/?>|/?[A-Za-z_!?])")
"""The ``<`` of anything a reader could take for a tag (opening, closing, comment)."""


def sanitize(text: str) -> str:
    """opencode-swarm's ``sanitizeLessonForContext``, plus newlines folded so one field stays
    on one line of the block."""
    kept = _DROPPED.sub("", text).replace("```", "` ` `")
    kept = _SYSTEM.sub("[BLOCKED]:", kept)
    kept = _TAG.sub("&lt;", redacted(kept))
    return " ".join(kept.split())


def clip(text: str, limit: int) -> str:
    """Display truncation (the stored lesson is never changed)."""
    return text if len(text) <= limit else text[:limit] + "…"


def to_fixed2(value: float) -> str:
    """JavaScript's ``toFixed(2)`` (ties on the exact binary value round up, not to even)."""
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _shown_safely(ranked: Ranked) -> bool:
    """Whether no field of the entry carries a hostile instruction."""
    entry = ranked.entry
    fields = [entry.lesson]
    for key in ("triggers", "required_actions", "forbidden_actions", "verification_checks"):
        fields.extend(entry.strings(key))
    return all(_harmless(text) for text in fields)


@lru_cache(maxsize=2048)
def _harmless(text: str) -> bool:
    """:func:`check_hostile` passes ``text`` (a dozen patterns over its normalised form: kept
    per text, since a resident process shows the same entries again and again)."""
    return check_hostile(text).valid


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


MIN_CLIPPED_DISPLAY = 200
"""The least of a lesson worth showing cut: below it the record says too little to act on."""


def lines_size(lines: Sequence[str]) -> int:
    """What ``lines`` add to a block (each with its newline)."""
    return sum(len(line) + 1 for line in lines)


def clipped_to_fit(
    make: Callable[[int], list[str]], room: int, max_display: int
) -> list[str] | None:
    """The record ``make(display)`` builds with the largest display limit (at most
    ``max_display``, at least :data:`MIN_CLIPPED_DISPLAY`) whose lines fit in ``room``; ``None``
    when even the least does not fit. For a record longer than a whole block: left out, it
    could never be shown however relevant (a 1,900-character learning under a 2,000-character
    budget); cut, the agent sees its start and its id, and can read the rest."""
    low, high = MIN_CLIPPED_DISPLAY, max_display
    best = None
    while low <= high:
        middle = (low + high) // 2
        lines = make(middle)
        if lines_size(lines) <= room:
            best, low = lines, middle + 1
        else:
            high = middle - 1
    return best


def render_directives(
    ranked: Sequence[Ranked], *, trace_id: str, budget: Budget, max_display: int
) -> tuple[str | None, list[Ranked]]:
    """The block and the entries it actually shows (``None`` when nothing fits). Records are
    shown whole; only a first record too long for the block on its own is cut to fit."""
    chosen = list(islice((r for r in ranked if _shown_safely(r)), budget.max_entries))
    records = [directive_record(r, max_display) for r in chosen]
    header = [OPEN_TAG, f"trace_id: {trace_id}", ACK_HINT]
    while records:
        block = "\n".join([*header, *(line for rec in records for line in rec), CLOSE_TAG])
        if len(block) <= budget.max_chars:
            return block, chosen[: len(records)]
        if len(records) == 1:
            room = budget.max_chars - lines_size(header) - len(CLOSE_TAG)
            first = chosen[0]
            cut = clipped_to_fit(partial(directive_record, first), room, max_display)
            if cut is None:
                return None, []
            return "\n".join([*header, *cut, CLOSE_TAG]), chosen[:1]
        records.pop()
    return None, []
