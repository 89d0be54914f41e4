"""Features for a learned second look at what users type, and the passages it would read.

Round 5 of forge quality (docs/QUALITY.md) asked whether a small learned scorer could find the
lasting decision inside a one-off request ("python3 should point to 3.11, please make it so",
"do not auto commit", "on host you have yq"): the user passages the keyword classifier rejects.
This module holds what that experiment measured with: the cheap, generic features of such a
passage (length, script, code identifiers, directive and modal words, the classifier's own
reason and score, where the message sits in the session) and :func:`user_passages`, which walks
a transcript's user messages the way ``forge.extract`` does and yields the rejected passages.
Left out of each repository in turn, the scorer trained on them did not beat forge as it is
(``python -m swarmq.eval.forge_train``), so forge does not use it; it stays as the harness.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

from swarmq.forge.classifier import classify
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import UNMINED_KINDS, minable
from swarmq.forge.passages import passages
from swarmq.forge.templates import (
    is_known_template,
    is_pasted_document,
    is_pasted_log,
    strip_front_matter,
)
from swarmq.transcripts.reader import open_transcript

_CODE = re.compile(
    r"`[^`]+`|\b[\w-]+/[\w./-]+|\b\w+\.(?:py|go|ts|js|rs|md|ya?ml|json|toml|sh|sql|lock|onnx)\b"
    r"|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|(?<!\w)--?[a-z][\w-]+|[A-Z]:\\"
)
_URL = re.compile(r"https?://")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_DIRECTIVE = re.compile(
    r"\b(?:should|must|need to|needs to|have to|always|never|by default|default|instead|"
    r"only|prefer|make sure|ensure|avoid)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:don'?t|do not|not|no|never|without|stop)\b", re.I)
_USE = re.compile(r"\b(?:use|using|set|point to|keep|put|store|save)\b", re.I)
_MEMORY = re.compile(
    r"\b(?:remember|memory|from now on|going forward|in future|keep in mind|note)\b", re.I
)
_WANT = re.compile(
    r"\b(?:i want|we want|i'd like|i need|we need|what i had in mind|the idea)\b", re.I
)
_HAVE = re.compile(r"\b(?:you have|is available|are available|installed|on (?:the )?host)\b", re.I)
_TASK = re.compile(
    r"\b(?:please|can you|could you|let'?s|help me|fix|implement|add|create|write|run|check|"
    r"show|explain|continue|commit|try)\b",
    re.I,
)
_CJK_DIRECTIVE = re.compile(
    r"必须|应该|不要|不用|只|默认|需要|使用|用|支持|保留|去除|放在|cần|không|phải|nên"
)
_QUESTION = re.compile(r"[?？]\s*$|^(?:what|why|how|which|where|when|is|are|does|do|can)\b", re.I)

REASONS = ("no-signal", "negative-pattern", "too-short", "low-confidence", "narration", "question")
"""The classifier's reasons a feature each; any other reason is the last, ``other``."""

FEATURES = (
    "log_length",
    "short",
    "long",
    "cjk",
    "code",
    "code_density",
    "digit",
    "url",
    "question",
    "directive",
    "negation",
    "use",
    "memory",
    "want",
    "have",
    "task",
    "cjk_directive",
    "confidence",
    "first_request",
    "log_ordinal",
    "whole_message",
    *(f"reason:{r}" for r in REASONS),
    "reason:other",
)


def features(
    passage: str, *, reason: str, confidence: float, ordinal: int, whole: bool
) -> list[float]:
    """The feature vector of one rejected user passage (order: :data:`FEATURES`).
    ``ordinal``: 1 for the session's first user message; ``whole``: the passage is the message."""
    n = len(passage)
    words = max(1, passage.count(" ") + 1)
    cjk = len(_CJK.findall(passage[:400]))
    code = len(_CODE.findall(passage))
    out = [
        math.log(1 + n) / math.log(1500),
        float(n < 60),
        float(n > 400),
        float(cjk > 0.2 * min(n, 400)),
        float(code > 0),
        min(1.0, code / words),
        float(any(c.isdigit() for c in passage)),
        float(_URL.search(passage) is not None),
        float(_QUESTION.search(passage.strip()) is not None),
        float(_DIRECTIVE.search(passage) is not None),
        float(_NEGATION.search(passage) is not None),
        float(_USE.search(passage) is not None),
        float(_MEMORY.search(passage) is not None),
        float(_WANT.search(passage) is not None),
        float(_HAVE.search(passage) is not None),
        float(_TASK.search(passage) is not None),
        float(cjk > 0 and _CJK_DIRECTIVE.search(passage) is not None),
        confidence,
        float(ordinal == 1),
        math.log(ordinal) / math.log(100),
        float(whole),
    ]
    out += [float(reason == r) for r in REASONS]
    out.append(float(reason not in REASONS))
    return out


MIN_REQUEST_CHARS = 12
"""Shorter passages ("ok", "go on") hold nothing to keep; "do not auto commit" is 18."""

SKIPPED_REASONS = frozenset({"too-long", "empty", "lead-in", "template"})
"""A passage the classifier set aside for these is a pasted spec or a fragment: not read again."""


def user_passages(
    path: Path, config: ForgeConfig | None = None
) -> Iterator[tuple[str, list[float]]]:
    """The passages of the user messages of ``path`` that forge's classifier rejects, with their
    features: what a second look would read (templates, pasted logs and documents excluded, as
    forge excludes them)."""
    config = config or ForgeConfig()
    ordinal = 0
    for message in open_transcript(path).messages(skip=UNMINED_KINDS):
        if message.role != "user" or not minable(message, config):
            continue
        ordinal += 1
        text = message.text
        if is_known_template(text) or is_pasted_log(text) or is_pasted_document(text):
            continue
        if text[:16].lstrip().startswith("---"):
            text = strip_front_matter(text)
        single = "\n" not in text.strip()
        for lead, passage in passages(text):
            verdict = classify(
                passage, min_confidence=config.min_confidence, lead=lead, observed=False
            )
            if verdict.accepted or verdict.reason in SKIPPED_REASONS:
                continue
            body = verdict.text or " ".join(passage.split())
            if len(body) < MIN_REQUEST_CHARS:
                continue
            yield (
                body,
                features(
                    body,
                    reason=verdict.reason,
                    confidence=verdict.confidence,
                    ordinal=ordinal,
                    whole=single,
                ),
            )
