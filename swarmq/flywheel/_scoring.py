"""Scoring a pending learning the way ``ao pool ingest`` does.

raw = (base_score(type) + Σ weight·rubric) / 2, plus 0.15 for declared ``high`` confidence or
0.07 for ``medium``, clamped to [0, 1]; the tier follows from the raw score. The rubric's
heuristics look at the block as written: backticks, digits, file names and "line " make it
specific; bullets, imperative verbs and code make it actionable; length moves novelty; a
``## Source`` or ``## Why It Matters`` section gives it context. Lengths are in UTF-8 bytes, and
``\\d`` / ``\\b`` are ASCII, as in Go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swarmq.flywheel.model import (
    RUBRIC_WEIGHTS,
    KnowledgeType,
    QualityTier,
    assign_tier,
    base_score,
)

_DIGIT = re.compile(r"[0-9]")
_FILE = re.compile(r"\b[a-zA-Z0-9_./-]+\.(go|ts|js|py|sh|yaml|yml|json|md)\b", re.ASCII)
_BULLET = re.compile(r"^\s*[-*]\s+", re.MULTILINE)
_IMPERATIVE = re.compile(
    r"\b(run|add|remove|use|ensure|check|grep|rg|fix|avoid|prefer|must|should)\b", re.I | re.ASCII
)

DECISION_CATEGORIES = frozenset({"decision", "pattern", "architectural-decision", "convention"})
FAILURE_CATEGORIES = frozenset({"failure", "anti-pattern", "antipattern", "postmortem"})
SOLUTION_CATEGORIES = frozenset({"solution", "fix", "workaround"})
REFERENCE_CATEGORIES = frozenset({"reference", "doc", "documentation"})
DECISION_SIGNALS = (
    "always ",
    "never ",
    "prefer ",
    "convention",
    "pattern:",
    "decision:",
    "we decided",
    "architectural",
)
FAILURE_SIGNALS = ("failed", "broke", "regression", "root cause", "post-mortem", "anti-pattern")


@dataclass(frozen=True, slots=True)
class Rubric:
    specificity: float
    actionability: float
    novelty: float
    context: float
    confidence: float

    def weighted(self) -> float:
        return (
            self.specificity * RUBRIC_WEIGHTS["specificity"]
            + self.actionability * RUBRIC_WEIGHTS["actionability"]
            + self.novelty * RUBRIC_WEIGHTS["novelty"]
            + self.context * RUBRIC_WEIGHTS["context"]
            + self.confidence * RUBRIC_WEIGHTS["confidence"]
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "specificity": self.specificity,
            "actionability": self.actionability,
            "novelty": self.novelty,
            "context": self.context,
            "confidence": self.confidence,
        }


@dataclass(frozen=True, slots=True)
class Score:
    raw: float
    tier: QualityTier
    rubric: Rubric
    gate_required: bool


def confidence_to_score(word: str) -> float:
    return {"high": 0.9, "medium": 0.7, "low": 0.5}.get(word.strip().lower(), 0.6)


def specificity(body: str) -> float:
    value = 0.4
    if "`" in body:
        value += 0.2
    if _DIGIT.search(body):
        value += 0.2
    if _FILE.search(body):
        value += 0.2
    if "line " in body.lower():
        value += 0.1
    return min(value, 1.0)


def actionability(body: str) -> float:
    value = 0.4
    if _BULLET.search(body):
        value += 0.2
    if _IMPERATIVE.search(body):
        value += 0.2
    if "```" in body:
        value += 0.2
    return min(value, 1.0)


def novelty(body: str) -> float:
    size = len(body.encode("utf-8"))
    value = 0.5
    if size > 800:
        value += 0.1
    if size < 250:
        value -= 0.1
    return max(0.0, min(value, 1.0))


def context(body: str) -> float:
    lower = body.lower()
    value = 0.5
    if "## source" in lower or "**source**" in lower:
        value += 0.2
    if "## why it matters" in lower:
        value += 0.1
    return min(value, 1.0)


def rubric(body: str, declared_confidence: str) -> Rubric:
    return Rubric(
        specificity(body),
        actionability(body),
        novelty(body),
        context(body),
        confidence_to_score(declared_confidence),
    )


def infer_type(category: str, body: str) -> KnowledgeType:
    """The block's category decides; otherwise two or more keyword signals do; else learning."""
    cat = category.strip().lower()
    if cat in DECISION_CATEGORIES:
        return KnowledgeType.DECISION
    if cat in FAILURE_CATEGORIES:
        return KnowledgeType.FAILURE
    if cat in SOLUTION_CATEGORIES:
        return KnowledgeType.SOLUTION
    if cat in REFERENCE_CATEGORIES:
        return KnowledgeType.REFERENCE
    lower = body.lower()
    if sum(1 for kw in DECISION_SIGNALS if kw in lower) >= 2:
        return KnowledgeType.DECISION
    if sum(1 for kw in FAILURE_SIGNALS if kw in lower) >= 2:
        return KnowledgeType.FAILURE
    return KnowledgeType.LEARNING


def score_block(knowledge_type: str, body: str, declared_confidence: str) -> Score:
    """Raw score, tier and rubric of one pending block."""
    parts = rubric(body, declared_confidence)
    raw = (base_score(knowledge_type) + parts.weighted()) / 2.0
    word = declared_confidence.strip().lower()
    if word == "high":
        raw += 0.15
    elif word == "medium":
        raw += 0.07
    raw = max(0.0, min(1.0, raw))
    tier = assign_tier(raw)
    return Score(raw, tier, parts, tier is QualityTier.BRONZE)
