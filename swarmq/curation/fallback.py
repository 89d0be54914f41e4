"""Deterministic enrichment: what plain rules can honestly read out of a lesson without a model.

Imperative sentences become ``required_actions``, prohibitions ("never", "do not", "avoid")
become ``forbidden_actions``, and the inferred technical tags become ``triggers``. It never
guesses agents, tools or a priority. Everything it writes is tagged ``deterministic_fallback``
so nobody mistakes it for a model's analysis.
"""

from __future__ import annotations

import re
from typing import Any

from swarmq.knowledge.tags import infer_tags
from swarmq.knowledge.validation import validate_directive_fields

_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
_PROHIBITION = re.compile(
    r"\b(never|do not|don't|must not|should not|avoid|no longer)\b", re.IGNORECASE
)
_IMPERATIVE = re.compile(
    r"^(?:always\s+|you\s+must\s+|must\s+)?(use|prefer|run|check|ensure|call|write|add|remove|update|set|"
    r"enable|verify|keep|pin|validate|test|document|review|lock|wrap|rebase|restart)\b",
    re.IGNORECASE,
)
_NOISE_TAGS = frozenset({"todo", "opencode-swarm"})
MAX_ITEMS = 3


def _clip(text: str) -> str:
    flat = " ".join(text.split()).strip(" .;")
    return flat[:200].rstrip()


def deterministic_directives(lesson: str) -> dict[str, Any]:
    """Directive fields derived by rule (empty when the lesson gives nothing to hold on to)."""
    required: list[str] = []
    forbidden: list[str] = []
    for sentence in (s for s in _SENTENCE.split(lesson) if s.strip()):
        text = _clip(sentence)
        if len(text) < 4:
            continue
        if _PROHIBITION.search(text):
            forbidden.append(text)
        elif _IMPERATIVE.match(text):
            required.append(text)
    fields: dict[str, Any] = {}
    if required:
        fields["required_actions"] = required[:MAX_ITEMS]
    if forbidden:
        fields["forbidden_actions"] = forbidden[:MAX_ITEMS]
    triggers = [t for t in infer_tags(lesson) if t not in _NOISE_TAGS][:MAX_ITEMS]
    if fields and triggers:
        fields["triggers"] = triggers
    return fields if not validate_directive_fields(fields) else {}
