"""Promoted learnings become swarm-tier knowledge entries, so injection sees them.

The knowledge store (``swarmq.knowledge``) is reached through :class:`LessonSink`, the
one call it offers other jobs (``KnowledgeStore.add_lesson``); the flywheel never touches
``.swarm/`` files itself. A lesson there is at most 280 characters, so the learning's body is
condensed at a sentence (else word) boundary; the artifact path goes in ``source_refs``. The
store's own validation and near-duplicate reinforcement decide what is kept; a refusal is
reported, never retried in a loop.

A promoted learning has passed the flywheel's gates (scored, tiered, cited by a later session),
so it is validated in ``flywheel.knowledge_bridge_validation`` mode (default ``strict``: inline
code such as `` `pytest -x` `` is normal in a technical lesson, real dangerous commands are still
refused), and the promotion is recorded as what it is, a confirmation: a phase confirmation for
the project's current phase (``0`` when no plan tracks phases), which reinforces a near-duplicate
lesson already in the store. Tags are de-duplicated, in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from swarmq.flywheel.content import canonical_content_body

MAX_LESSON_CHARS = 280

CATEGORY_BY_CLASS = {
    "architecture": "architecture",
    "workflow": "process",
    "timeline": "process",
    "decision": "architecture",
}
CATEGORY_BY_TYPE = {
    "failure": "debugging",
    "solution": "debugging",
    "decision": "architecture",
    "reference": "other",
    "learning": "process",
}


class LessonSink(Protocol):
    """What the knowledge store offers (``KnowledgeStore.add_lesson``)."""

    def add_lesson(
        self,
        lesson: str,
        *,
        category: str | None = ...,
        tags: Sequence[str] | None = ...,
        confidence: float | None = ...,
        auto_generated: bool = ...,
        source_refs: Iterable[str] = ...,
        phase: int | None = ...,
        validation_mode: Any = ...,
    ) -> Any: ...

    def current_phase(self) -> int | None: ...


NO_PLAN_PHASE = 0
"""The confirming phase recorded when no plan tracks phases."""
DEFAULT_VALIDATION = "strict"


@dataclass(frozen=True, slots=True)
class BridgeOutcome:
    artifact_path: str
    outcome: str
    reason: str | None = None
    entry_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "artifact_path": self.artifact_path,
            "outcome": self.outcome,
            "reason": self.reason,
            "entry_id": self.entry_id,
        }


_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MARKUP = re.compile(r"^\s*(?:[-*>#]+|\*\*[^*]+\*\*:?)\s*", re.MULTILINE)


def condense(body: str, limit: int = MAX_LESSON_CHARS) -> str:
    """One line of at most ``limit`` characters, ending at a sentence or word boundary."""
    text = " ".join(_MARKUP.sub("", canonical_content_body(body)).split())
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in _SENTENCE.split(text):
        candidate = f"{kept} {sentence}".strip()
        if len(candidate) > limit:
            break
        kept = candidate
    if len(kept) >= 40:
        return kept
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(",;:") + "…"


def category_for(knowledge_type: str, knowledge_class: str | None) -> str:
    if knowledge_class and knowledge_class in CATEGORY_BY_CLASS:
        return CATEGORY_BY_CLASS[knowledge_class]
    return CATEGORY_BY_TYPE.get(knowledge_type, "other")


def unique_tags(tags: Iterable[str]) -> list[str]:
    """Non-empty tags, first occurrence kept (``decision`` as type and class is one tag)."""
    return list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))


def publish(
    sink: LessonSink,
    artifact_path: str,
    candidate: dict[str, Any],
    *,
    validation_mode: str = DEFAULT_VALIDATION,
) -> BridgeOutcome:
    """Add one promoted learning to the swarm tier, confirmed in the current phase;
    exceptions become a ``failed`` outcome."""
    metadata = candidate.get("metadata") if isinstance(candidate.get("metadata"), dict) else {}
    kclass = metadata.get("knowledge_class") if isinstance(metadata, dict) else None
    ktype = str(candidate.get("type") or "learning")
    lesson = condense(str(candidate.get("content") or ""))
    if len(lesson) < 15:
        return BridgeOutcome(artifact_path, "skipped", "body too short for a lesson")
    tags = ["agentops", ktype, str(candidate.get("tier") or "")] + ([str(kclass)] if kclass else [])
    confidence = candidate.get("confidence")
    try:
        phase = sink.current_phase()
        result = sink.add_lesson(
            lesson,
            category=category_for(ktype, str(kclass) if kclass else None),
            tags=unique_tags(tags),
            confidence=float(confidence) if isinstance(confidence, int | float) else None,
            auto_generated=True,
            source_refs=[artifact_path],
            phase=NO_PLAN_PHASE if phase is None else phase,
            validation_mode=validation_mode,
        )
    except Exception as exc:  # the store's errors must not undo a promotion that already landed
        return BridgeOutcome(artifact_path, "failed", f"{type(exc).__name__}: {exc}")
    entry = getattr(result, "entry", None)
    return BridgeOutcome(
        artifact_path,
        str(getattr(result, "outcome", "added")),
        getattr(result, "reason", None),
        getattr(entry, "id", None),
    )
